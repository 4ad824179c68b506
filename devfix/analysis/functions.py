"""Calls of a file's own functions, and what each function is (a mixin of `Program`).

A call site feeds the callee's parameters (joined over the pass's call sites, program world)
and gets back what the callee returns, made at the call; a call that asks for a GPU whatever
devfix does is noted as GPU-only (demands.py). Kept apart from program.py, which runs the
fixpoint these calls feed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import arguments, calls
from devfix.analysis import torch_api as api
from devfix.analysis.callers import kept_defaults
from devfix.analysis.demands import (
    asks_for_gpu,
    bool_defaults,
    compared_with_the_cpu,
    cuda_switch_params,
    gpu_defaults,
    kept_device_params,
)
from devfix.analysis.linking import FunctionSummary
from devfix.analysis.scopes import Scope
from devfix.analysis.state import FlowState
from devfix.analysis.tree import defaults_to_a_constant, kept_parameters
from devfix.analysis.values import HOST, UNKNOWN, Kind, Meeting, Origin, Place, Slot, Value, constant, join

if TYPE_CHECKING:
    from devfix.analysis.classinfo import ClassInfo
    from devfix.analysis.evaluate import Frame

Args = list[tuple[cst.Arg, Value]]


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    scope: Scope
    klass: ClassInfo | None = None
    self_name: str | None = None
    world: str = "program"
    args: dict[str, Value] = field(default_factory=dict)  # joined over the call sites of the previous pass
    pending: dict[str, Value] = field(default_factory=dict)  # call sites of this pass
    pending_left: set[str] = field(default_factory=set)  # parameters a call of this pass leaves at their default
    calls: int = 0
    pending_calls: int = 0
    # the module's names at this pass's calls from the module's own code, joined (None: no such
    # call yet); `call_globals`: those of the calls the evaluation may rely on (see program.py)
    pending_globals: dict[str, Value] | None = None
    call_globals: dict[str, Value] | None = None
    returns: Value | None = None
    tuples_returned: dict[int, Value] = field(default_factory=dict)  # the tuples it returns, by length
    param_moves: dict[str, Slot] = field(default_factory=dict)  # module parameters moved in place, with the evidence
    module_inputs: set[str] = field(default_factory=set)  # module world: parameters shown to meet the weights
    moves_params: set[str] = field(default_factory=set)  # parameters the function moves itself
    host_params: set[str] = field(default_factory=set)  # parameters it keeps on the host (pack lengths, NumPy)

    @property
    def name(self) -> str:
        return self.node.name.value

    def parameters(self) -> list[cst.Param]:
        params = self.node.params
        return [*params.posonly_params, *params.params, *params.kwonly_params]


class FunctionFlow(FlowState):
    """The calls of the file's functions, for `Program`."""

    def call_local(self, frame: Frame, node: cst.Call, callee: Value, args: Args) -> Value:
        ref = callee.ref
        if isinstance(ref, cst.ClassDef) and id(ref) in self.classes:
            return self.instantiate(frame, node, self.classes[id(ref)], args)
        if isinstance(ref, cst.FunctionDef) and id(ref) in self.functions:
            return self.call_function(frame, node, self.functions[id(ref)], args, bound=callee.bound)
        if isinstance(ref, cst.FunctionDef) and id(ref) in self.linked_functions:
            # a function of another project file: what it may do to its arguments is unknown
            # here; what it returns is what its summary says, made at this call
            summary = self.linked_functions[id(ref)]
            self.note_gpu_argument(
                node, args, summary.params, summary.device_params, summary.cuda_switches, summary.needs_gpu
            )
            passed = self.note_linked_call(summary, args)
            self._linked_meetings(node, summary, args)
            for index, (arg, value) in enumerate(args):
                name = arguments.parameter_name(arg, index, summary.params)
                if not (value.kind is Kind.MODULE and name in summary.keeps and passed is not None):
                    frame.escape(value)
            returns = summary.returns
            if returns is not None and summary.switch and not _switched_on(summary, args):
                return UNKNOWN  # `gen_z(16, 8, False)`: the caller turned the move off, or may have
            return self._returned(frame, node, returns) if returns is not None else UNKNOWN
        return UNKNOWN

    def _linked_meetings(self, node: cst.Call, summary: FunctionSummary, args: Args) -> None:
        """`loss_fn(output_batch, labels_batch)` of another file's `loss_fn(outputs, labels)`,
        which combines its two parameters: the arguments meet at this call."""
        if not summary.meets:
            return
        by_name = {arguments.parameter_name(arg, i, summary.params): (arg.value, v) for i, (arg, v) in enumerate(args)}
        for first, second in sorted(summary.meets):
            met = [by_name[name] for name in (first, second) if name in by_name]
            if len(met) == 2 and all(value.kind is Kind.TENSOR for _, value in met):
                self.meet(node, "op", met)

    def note_parent_init(self, node: cst.Call, klass: ClassInfo) -> None:
        """`super().__init__(model, device)` in a constructor asks for a GPU as building the
        parent directly would, and hands on the constructor's own GPU default (DeepRobust's
        attacks pass their `device="cuda"` to `BaseAttack`, which keeps it for its `.cuda()`)."""
        args = [(arg, UNKNOWN) for arg in node.args]
        for base in klass.bases:
            init = base.method("__init__")
            if init is not None and id(init) in self.functions:
                info = self.functions[id(init)]
                names = [p.name.value for p in info.parameters()][1:]
                self.note_gpu_argument(
                    node, args, names, self.device_params(info), self.cuda_switches(info), method=True
                )
                return
            linked = base.linked_method("__init__")
            if linked is not None:
                self.note_gpu_argument(
                    node, args, linked.params, linked.device_params, linked.cuda_switches, linked.needs_gpu, method=True
                )
                return

    def note_linked_call(self, summary: FunctionSummary | None, args: Args) -> dict[str, Value] | None:
        """A call of another file's function (or class): what it passes, for that file."""
        if summary is None:
            return None
        passed = calls.linked_arguments(summary.params, args)
        self.linked_calls.append((summary, passed))
        return passed

    def device_params(self, info: FunctionInfo) -> frozenset[str]:
        """Parameters the function moves tensors or modules to (`z.to(current_device)`,
        `x.cuda(gpu)`, `torch.zeros(..., device=dev)`): whatever a caller passes there is a
        device."""
        key = id(info.node)
        if key not in self._device_params:
            params = {p.name.value for p in info.parameters()}
            found = set()
            for call in self.data.within(self.data.calls, info.node):
                func = call.func
                for arg in call.args:
                    target = arg.value
                    if not isinstance(target, cst.Name) or target.value not in params:
                        continue
                    moved = (
                        isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda") and arg.keyword is None
                    )
                    if moved or (arg.keyword is not None and arg.keyword.value == "device"):
                        found.add(target.value)
            if info.name == "__init__" and info.klass is not None:
                # `self.device = device` that a method moves tensors to (DeepRobust's `GCNJaccard`)
                found |= kept_device_params(self.data, info.klass.node, kept_parameters(info.node))
            self._device_params[key] = frozenset(found)
        return self._device_params[key]

    def cuda_switches(self, info: FunctionInfo) -> frozenset[tuple[str, bool]]:
        """Parameters whose default makes the function call `.cuda()` (demands.py), itself or
        through a callee it hands the switch to (`build_mt_model(params, data, cuda=True)`
        passes `cuda=cuda` to a builder that moves the model under it: UnsupervisedMT)."""
        key = id(info.node)
        if key not in self._cuda_switches:
            self._cuda_switches[key] = cuda_switch_params(self.data, info.node)
        return self._cuda_switches[key] | self._forwarded_switches.get(key, frozenset())

    def note_gpu_argument(
        self,
        node: cst.Call,
        args: Args,
        params: Sequence[str],
        device_params: frozenset[str],
        cuda_switches: frozenset[tuple[str, bool]] = frozenset(),
        needs_gpu: bool = False,
        *,
        method: bool = False,
    ) -> None:
        """A call that asks for a GPU whatever devfix does, like `torch.cuda.current_device()`:
        `model.sample(144, 0)` where `sample` moves its result to that parameter,
        `totensor(x)` where `totensor(data, cuda=True)` calls `.cuda()` unless told otherwise,
        or a function of another file that needs a GPU itself (demands.py)."""
        # DEV002 rewrites `device="cuda"` passed to a function (not a method) of a file that imports torch
        # (not one compared with a CPU run of the same function: its GPU is meant; asked only of a
        # call that passes a string, as the question scans the file's calls)
        rewritten = self.imports_torch and not method
        if rewritten and any(isinstance(arg.value, cst.SimpleString) for arg, _ in args):
            rewritten = not compared_with_the_cpu(self.values, self.data.calls, node)
        if needs_gpu or asks_for_gpu(args, params, device_params, cuda_switches, rewritten_here=rewritten):
            self.gpu_only_calls.append(node)
        elif cuda_switches:
            self._note_forwarded_switches(node, args, params, cuda_switches)

    def _note_forwarded_switches(
        self, node: cst.Call, args: Args, params: Sequence[str], switches: frozenset[tuple[str, bool]]
    ) -> None:
        """`cuda=cuda` handed to a callee's GPU switch, where `cuda` is a parameter of the
        calling function with a `True` or `False` default: that parameter is a switch too."""
        function = self.data.parent.get(id(node))
        while function is not None and not isinstance(function, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            function = self.data.parent.get(id(function))
        if not isinstance(function, cst.FunctionDef):
            return
        # `cuda=cuda` of a `cuda=True` parameter, `device` of a `device="cuda"` one
        defaults = bool_defaults(function) | dict.fromkeys(gpu_defaults(function), True)
        names = {name for name, _ in switches}
        for index, (arg, _) in enumerate(args):
            name = arguments.parameter_name(arg, index, params)
            if name in names and isinstance(arg.value, cst.Name) and arg.value.value in defaults:
                known = self._forwarded_switches.get(id(function), frozenset())
                switch = (arg.value.value, defaults[arg.value.value])
                self._forwarded_switches[id(function)] = known | {switch}

    def call_function(self, frame: Frame, node: cst.Call, info: FunctionInfo, args: Args, bound: Value | None) -> Value:
        self.call_sites.setdefault(id(info.node), []).append(node)
        if frame.no_grad:
            self.quiet_calls.add(id(node))
        params = info.parameters()
        names = [p.name.value for p in params]
        if info.self_name is not None and names and names[0] == info.self_name:
            names = names[1:]
        # a constructor's `device="cuda"` stays as written (DEV002 rewrites a function's alone)
        constructor = info.name == "__init__" and info.klass is not None
        self.note_gpu_argument(
            node, args, names, self.device_params(info), self.cuda_switches(info), method=constructor
        )
        star = any(arg.star for arg, _ in args)
        if info.world == "program" and not star:
            for index, (arg, value) in enumerate(args):
                name = arguments.parameter_name(arg, index, names)
                if name is None or name not in names:
                    continue
                info.pending[name] = join(info.pending.get(name), value) if name in info.pending else value
            filled = {arguments.parameter_name(arg, index, names) for index, (arg, _) in enumerate(args)}
            info.pending_left |= {p.name.value for p in params if p.default is not None and p.name.value not in filled}
            info.pending_calls += 1
            if frame.function is None and frame.scope.kind == "module":
                info.pending_globals = _joined_names(info.pending_globals, frame.env)
        for index, (arg, value) in enumerate(args):
            name = arguments.parameter_name(arg, index, names)
            if value.kind is Kind.MODULE and name in info.param_moves:
                frame.set_place(value.obj, *info.param_moves[name])
            elif star or name is None:
                frame.escape(value)
        if info.world == "module" and bound is not None and bound.kind is Kind.MODULE:
            if info.name in ("forward", "__call__"):
                return calls.module_call(frame, node, bound, args)
            if info.name == "__init__":
                return HOST
            if frame.world == "module":
                # `self.v(s)` inside the module: what the method feeds to the weights meets them,
                # and it returns what `self.init_hidden(n)` makes
                self._meet_method_inputs(node, info, bound, args, names)
                return info.returns or UNKNOWN
            return self._module_method_result(frame, node, info, bound, args, names)
        handed_back = self._handed_back(info, args, names) if info.world == "program" and not star else None
        if handed_back is not None:
            return handed_back
        if info.returns is None:
            return UNKNOWN
        return self._returned(frame, node, info.returns)

    def _handed_back(self, info: FunctionInfo, args: Args, names: list[str]) -> Value | None:
        """`def check_args(args): ...; return args`: a function that returns one of its
        parameters, never rebound, returns at each call what that call passes (a launcher's
        options keep their values through the check that hands them back)."""
        returns = self.data.within(self.data.returns, info.node)
        if not returns or not all(isinstance(r, cst.Return) and isinstance(r.value, cst.Name) for r in returns):
            return None
        returned = {r.value.value for r in returns if isinstance(r, cst.Return) and isinstance(r.value, cst.Name)}
        if len(returned) != 1:
            return None
        name = next(iter(returned))
        bindings = info.scope.bindings.get(name, [])
        if len(bindings) != 1 or bindings[0].kind != "param":
            return None
        for index, (arg, value) in enumerate(args):
            if arguments.parameter_name(arg, index, names) == name:
                return value
        return None

    def _module_method_result(
        self, frame: Frame, node: cst.Call, info: FunctionInfo, module: Value, args: Args, names: list[str]
    ) -> Value:
        """`model.generate(ids)`, `model.init_hidden(n)` from a program: the arguments the method
        feeds to the module's weights meet them; what it returns lives where the method made it
        (on the module's device, or on the CPU when it builds a tensor from nothing)."""
        self._meet_method_inputs(node, info, module, args, names)
        result = info.returns
        if result is None:
            return UNKNOWN
        if result.place is Place.DEVICE and all(_on_the_module(o, info.self_name) for o in result.origins):
            return replace(
                result, place=module.place, origins=module.origins if module.place is not Place.UNKNOWN else frozenset()
            )
        return result

    def _meet_method_inputs(
        self, node: cst.Call, info: FunctionInfo, module: Value, args: Args, names: list[str]
    ) -> None:
        inputs = []
        for index, (arg, value) in enumerate(args):
            name = arguments.parameter_name(arg, index, names)
            if name in info.module_inputs and value.kind is Kind.TENSOR and not value.scalar:
                inputs.append((arg.value, value))
        if inputs:
            self.meet(node, "call", inputs, module=module)

    def _returned(self, frame: Frame, call: cst.Call, value: Value) -> Value:
        """What a helper builds and returns is, for its caller, made at the call: a fix moves
        it there (`build_model().to(device)`), never inside a function other callers share."""
        if value.kind is Kind.STRUCT and value.items:
            return self._returned_tuple(frame, call, value)
        if (
            value.place is not Place.CPU
            or not value.origins
            or not all(o.kind in ("construct", "factory", "host") for o in value.origins)
        ):
            return value
        if value.kind is Kind.MODULE:
            obj = id(call)
            frame.heap[obj] = (Place.CPU, frozenset({Origin("construct", call)}))
            return replace(value, origins=frozenset({Origin("construct", call)}), obj=obj)
        if value.kind is Kind.TENSOR:
            return replace(
                value, origins=frozenset({Origin("host", call, loop=frame.loops[-1] if frame.loops else None)})
            )
        return value

    def _returned_tuple(self, frame: Frame, call: cst.Call, value: Value) -> Value:
        """`net, lossfun, optimizer = makeTheNet()` (a course's transfer-learning notebook, which
        builds a second net to give it a new head): each call's net is a module of its own, on the
        CPU until moved, even after a training function moved the first call's. The fix stays
        where the helper builds it (a move of the call would move a tuple)."""
        built = [
            index
            for index, item in enumerate(value.items or ())
            if item.kind is Kind.MODULE
            and item.place is Place.CPU
            and item.origins
            and all(o.kind == "construct" for o in item.origins)
        ]
        if len(built) != 1:
            return value
        items = list(value.items or ())
        obj = id(call)
        frame.heap[obj] = (Place.CPU, items[built[0]].origins)
        items[built[0]] = replace(items[built[0]], obj=obj)
        return replace(value, items=tuple(items))

    def parameter_value(self, info: FunctionInfo, param: cst.Param) -> Value:
        name = param.name.value
        if info.world == "module":
            if info.name == "__init__":
                held = self.init_modules.get((id(info.node), name))
                if held is not None:  # a submodule to hold, of a known class: it lives with its holder
                    return Value(Kind.MODULE, Place.DEVICE, frozenset({Origin("module", param, name=name)}), cls=held)
                return UNKNOWN  # sizes, flags, layers to hold: configuration, not activations
            if name in info.module_inputs:
                return Value(Kind.TENSOR, Place.DEVICE, frozenset({Origin("module", param, name=name)}))
            passed = self.arguments_of(info).get(name)  # from the callers of a moved module (this file's or others')
            origin = Origin("param", param, name=name, note="callers of the moved module")
            if passed is not None and passed.kind is Kind.TENSOR and passed.place is Place.DEVICE:
                return Value(Kind.TENSOR, Place.DEVICE, frozenset({origin}))
            if (
                passed is not None
                and passed.kind is Kind.STRUCT
                and passed.items
                and all(item.kind is Kind.TENSOR and item.place is Place.DEVICE for item in passed.items)
            ):
                # `encoder((words, lengths))`: a tuple of tensors the callers put on the device
                item = Value(Kind.TENSOR, Place.DEVICE, frozenset({origin}))
                return Value(Kind.STRUCT, Place.DEVICE, frozenset({origin}), items=(item,) * len(passed.items))
            return Value(Kind.TENSOR, Place.UNKNOWN, param=info.node)
        known = self.arguments_of(info)
        if name in known:
            value = known[name]
            if not info.calls and value.place is Place.DEVICE and not value.origins:
                # from callers in other files: the evidence here is the parameter they fill
                return replace(
                    value, origins=frozenset({Origin("param", param, name=name, note="callers in other files")})
                )
            return value
        kept = self.kept_defaults(info)
        if name in kept:
            return constant(kept[name])  # no call in the run passes it (`fix=True` left alone)
        if not info.calls and api.LOADER_NAME.match(name):
            # spec: a parameter whose name says "data loader" is one (its batches are CPU tensors)
            element = Value(Kind.STRUCT, Place.CPU, element=Value(Kind.TENSOR, Place.CPU))
            return Value(Kind.LOADER, Place.CPU, obj=id(param), element=element)
        return UNKNOWN

    def kept_defaults(self, info: FunctionInfo) -> dict[str, bool]:
        """The `True`/`False` defaults of a script function that no call in the run overrides."""
        if not self.callers_pass:
            return {}
        if self.data.parent.get(id(info.node)) is self.module:
            key = info.name
        elif info.klass is not None and self.data.parent.get(id(info.klass.node)) is self.module:
            key = f"{info.klass.node.name.value}.{info.name}"
        else:
            return {}
        params = info.parameters()
        if info.self_name is not None and params and params[0].name.value == info.self_name:
            params = params[1:]
        positional = {id(p) for p in (*info.node.params.posonly_params, *info.node.params.params)}
        spec = [
            (
                p.name.value,
                id(p) in positional,
                p.default.value == "True"
                if isinstance(p.default, cst.Name) and p.default.value in ("True", "False")
                else None,
            )
            for p in params
        ]
        return kept_defaults(spec, self.callers_pass.get(key))

    def arguments_of(self, info: FunctionInfo) -> dict[str, Value]:
        """What the function's callers pass, by parameter: this file's call sites, or, for a
        top-level function no call of this file reaches, the callers in other files."""
        if info.calls:
            if self.called_elsewhere(info):
                # other files call it too, with what this file cannot see: a `True` one of this
                # file's calls passes (`SegmentationLosses(cuda=True)` in a self-test) is not
                # the value of the flag
                return {
                    name: UNKNOWN if value.kind is Kind.HOST and value.flag == "constant" else value
                    for name, value in info.args.items()
                }
            return info.args
        if info.klass is None and info.name in self.incoming and self.data.parent.get(id(info.node)) is self.module:
            return self.incoming[info.name]
        if info.klass is not None and self.data.parent.get(id(info.klass.node)) is self.module:
            return self.incoming.get(f"{info.klass.node.name.value}.{info.name}", {})  # built or called in other files
        return {}

    def called_elsewhere(self, info: FunctionInfo) -> bool:
        """Another file of the run names the function, or the class whose method it is."""
        owner = info.klass.node if info.klass is not None else info.node
        return self.data.parent.get(id(owner)) is self.module and owner.name.value in self.named_elsewhere

    def self_value(self, info: FunctionInfo) -> Value:
        klass = info.klass
        assert klass is not None
        if info.world == "module":
            return Value(Kind.MODULE, Place.DEVICE, frozenset({Origin("module", klass.node)}), cls=klass.node)
        return Value(Kind.DATASET if klass.kind == "dataset" else Kind.OTHER, Place.UNKNOWN, cls=klass.node)


def _joined_names(seen: dict[str, Value] | None, env: dict[str, Value]) -> dict[str, Value]:
    """The module's names as every call so far saw them: a name some call did not see bound is
    left to the module's final value."""
    if seen is None:
        return dict(env)
    return {name: join(value, env[name]) for name, value in seen.items() if name in env}


def _switched_on(summary: FunctionSummary, args: Args) -> bool:
    """The call turns on the GPU switch of another file's function: it passes something true
    where a GPU is used (`True`, `args.cuda`, `torch.cuda.is_available()`), or leaves a `True`
    default."""
    for index, (arg, value) in enumerate(args):
        if arg.star:
            return False
        if arguments.parameter_name(arg, index, summary.params) == summary.switch:
            return value.truth is True
    return summary.switch_default


def _on_the_module(origin: Origin, self_name: str | None) -> bool:
    """The method's result lives with the module: its own parameters or layers, or a tensor made
    on the device of one of them (`torch.tensor(..., device=self.identity.device)`, uvadlc's
    `CyclicGroup`, which a notebook also runs on the CPU, never moved)."""
    if origin.kind == "module":
        return True
    if origin.kind != "move" or origin.note != "relative" or self_name is None or origin.device is None:
        return False
    root = origin.device
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value == self_name


def infer_module_inputs(functions: dict[int, FunctionInfo], meeting: Meeting) -> None:
    """Module world: a method parameter that meets the module's own weights is an input
    living on the module's device. Not one whose default is a number (`stop_threshold=0.5`,
    compared with the decoder's outputs in ppg-vc's and MockingBird's `inference`)."""
    device = (meeting.module is not None and meeting.module.place is Place.DEVICE) or any(
        v.place is Place.DEVICE for _, v in meeting.operands
    )
    if not device or meeting.kind == "host":
        return
    operands = meeting.operands
    if meeting.kind == "index" and meeting.detail == "subscript":
        # `out[:, allowed_classes]`: a device tensor takes an index from anywhere (PyTorch
        # moves a CPU one), so only a device index says where the indexed tensor lives
        (_, base), (_, index) = operands[:2]
        operands = operands[:1] if index.place is Place.DEVICE and base.place is not Place.DEVICE else ()
    if meeting.kind == "call" and isinstance(meeting.node, cst.Call) and meeting.module is not None:
        # `self.downsample(x, S, H, W)`: the input meets the weights, not nnFormer's sizes after it
        first = meeting.node.args[0].value if meeting.node.args and meeting.node.args[0].keyword is None else None
        operands = tuple((node, value) for node, value in operands if node is first)
    for node, value in operands:
        if value.param is not None and isinstance(node, cst.Name):
            function = functions.get(id(value.param))
            if function is not None and not any(
                p.name.value == node.value and defaults_to_a_constant(p) for p in function.parameters()
            ):
                function.module_inputs.add(node.value)


def passed_arguments(info: FunctionInfo) -> dict[str, Value]:
    """What the calls of this pass passed each parameter. One that some calls fill and others
    leave at its default is unknown: fast-transformers' `_get_inputs(..., device="cpu")` moves its
    tensors to "cuda" for one GPU benchmark and to the CPU for every other test."""
    return {name: UNKNOWN if name in info.pending_left else value for name, value in info.pending.items()}

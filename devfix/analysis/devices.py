"""The one device provider: which device expression a fix writes at a given node.

In order of preference (spec principle 6, one device name per scope, reused):

1. the expression the evidence itself used (`model.to(dev)` -> `dev`), where it is in reach;
2. a device variable in reach (any name the flow shows holds a device that can be CUDA:
   `device`, `dev`, `args.device`, `self.device`, a `device` parameter);
3. in a function that receives the model, the model's own device
   (`device = next(model.parameters()).device`), unless the function decides that device;
4. a new declaration (`device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`),
   only where it cannot disagree with the program's own choice: the evidence was put on the
   GPU unconditionally or by an availability check, never by a user's `--cuda` flag.

A declaration is returned as data (`DeclarationRequest`); the engine inserts the ones the
applied fixes need, once per scope (rule DEV001).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from devfix.analysis.classinfo import ClassInfo
from devfix.analysis.operations import reads_a_switch
from devfix.analysis.program import Program
from devfix.analysis.scopes import Binding, Scope, dotted_parts
from devfix.analysis.torch_api import CUDA_FLAG_NAME, DEVICE_NAME, PLAIN_DEVICE_NAMES, device_string_place, gpu_number
from devfix.analysis.tree import Tree, compared_with_a_string, defaults_to_a_constant, is_docstring, read_names
from devfix.analysis.values import Kind, Meeting, Origin, Place, Value

# How a move's device was chosen, when a new declaration may stand in for it.
DECLARABLE = frozenset({"available", "hard"})


def _owns_parameters(klass: ClassInfo) -> bool:
    """`next(self.parameters())` cannot raise: the module holds a layer or a parameter (a
    registered one: `self.w = torch.rand(3, requires_grad=True)` is a plain attribute that
    `parameters()` never yields, and a buffer is not a parameter either)."""
    for value in klass.attrs.values():
        if (value.kind is Kind.MODULE and not value.neutral) or (
            value.kind is Kind.TENSOR and value.grad and value.member
        ):
            return True
    return any(_owns_parameters(base) for base in klass.bases)


def is_device(value: Value | None) -> bool:
    """A value that names a device that can be the accelerator: `torch.device(...)`, `"cuda"`."""
    if value is None:
        return False
    if value.kind is Kind.DEVICE:
        return value.place is Place.DEVICE and not value.tensor_type
    return value.kind is Kind.HOST and value.text is not None and device_string_place(value.text) == "device"


@dataclass(eq=False)
class DeclarationRequest:
    """One `device = ...` statement DEV001 inserts, for every fix that needs it."""

    scope: Scope
    code: str  # the right-hand side
    anchor: cst.BaseStatement
    before: bool
    needs_torch_import: bool
    node: cst.CSTNode  # the first node that needed it (where DEV001 reports)


@dataclass(frozen=True)
class DeviceChoice:
    code: str
    request: DeclarationRequest | None = None


class Devices:
    def __init__(
        self,
        tree: Tree,
        program: Program,
        *,
        style: str = "conditional",
        allow_declarations: bool = True,
        gpus_chosen_elsewhere: bool = False,
        gpu_choice_functions: frozenset[str] = frozenset(),
        scripted: bool = False,
    ) -> None:
        self.tree = tree
        self.scripted = scripted  # the run scripts modules: no `next(self.parameters())` (TorchScript has no `next`)
        self.program = program
        self.style = style
        self.allow_declarations = allow_declarations
        self.gpus_chosen_elsewhere = gpus_chosen_elsewhere
        self.gpu_choice_functions = gpu_choice_functions
        self.requests: dict[int, DeclarationRequest] = {}
        self._device_names_of: dict[int, frozenset[str]] = {}
        self._read_globals: dict[tuple[int, str], bool] = {}  # (function, name): the function reads the global

    # -- the question rules ask ------------------------------------------------------------------
    def at(
        self, node: cst.CSTNode, rule: str, evidence: Iterable[Origin] = (), meetings: Iterable[Meeting] = ()
    ) -> DeviceChoice | None:
        """The device a fix at `node` uses. `meetings`: where the value meets the device; with no
        device in reach, a tensor met there, bound before `node`, names it (`output.device`)
        before a new declaration would."""
        evidence = tuple(evidence)
        found = self._from_evidence(node, evidence) or self._in_reach(node, cuda_move=rule == "DEV002")
        if found is not None:
            return DeviceChoice(found)
        planned = self._planned(node)
        if planned is not None:
            return DeviceChoice("device", planned)
        derived = self._derived(node, rule)
        if derived is not None:
            return derived
        met = self._met_tensor(node, meetings)
        if met is not None:
            # vit-explain's rollout makes its mask beside `output = self.model(input_tensor)`, a
            # model the script moves only under `--use_cuda`: a cuda-if-available device would not
            return DeviceChoice(f"{met}.device")
        if not self._declarable(evidence):
            return None
        return self._declare(node, rule)

    def relative(self, node: cst.CSTNode, meetings: Iterable[Meeting]) -> str | None:
        """Inside a module's own methods: the device of a tensor that lives with the module —
        the method's first tensor argument shown to meet its weights, else a tensor the value
        meets there, bound before `node`; else a buffer's; else the module's parameters'."""
        tree = self.tree
        method = tree.enclosing(node, cst.FunctionDef)
        info = self.program.functions.get(id(method)) if method is not None else None
        if info is None:
            return None
        candidates: list[str] = [
            p.name.value
            for p in info.parameters()
            if p.name.value in info.module_inputs and not _annotated_no_tensor(p) and not defaults_to_a_constant(p)
        ]
        candidates += self._met_names(meetings)
        scope = tree.function_scope_of(node)
        position = tree.order(node)
        for name in candidates:
            bindings = scope.bindings.get(name, [])
            if any(b.kind == "param" or (b.order < position and not tree.is_inside(node, b.node)) for b in bindings):
                if self._rebound_to_other_than_a_tensor(bindings, node):
                    continue  # `losses = self.weigh_losses(losses, ...)`: a dict by then (neuralop's Relobralo)
                return f"{name}.device"
        klass = info.klass
        if info.self_name is not None and klass is not None:
            # not a buffer the class also sets as a plain tensor (torchmd-net's `self.Zij_map =
            # torch.empty(0, 0, 0)` in `__init__`, registered later): `.to()` leaves that one behind
            for name in sorted(b for b in klass.buffers if b not in klass.attrs):
                return f"{info.self_name}.{name}.device"
            if _owns_parameters(klass) and not self.scripted:
                return f"next({info.self_name}.parameters()).device"
        return None

    @staticmethod
    def _met_names(meetings: Iterable[Meeting]) -> list[str]:
        """The plain names of the device tensors met in `meetings`."""
        return [
            operand.value
            for meeting in meetings
            for operand, value in meeting.operands
            if value.place is Place.DEVICE and value.kind is Kind.TENSOR and isinstance(operand, cst.Name)
        ]

    def _met_tensor(self, node: cst.CSTNode, meetings: Iterable[Meeting]) -> str | None:
        """A device tensor met in `meetings`, bound by a plain assignment in `node`'s own function
        before `node`, and not rebound between."""
        tree = self.tree
        scope = tree.function_scope_of(node)
        if scope.function is None:
            return None
        position = tree.order(node)
        for name in self._met_names(meetings):
            bindings = scope.bindings.get(name, [])
            before = [b for b in bindings if b.kind == "assign" and b.order < position]
            if before and len(bindings) == len(before) and not any(tree.is_inside(node, b.node) for b in before):
                return name
        return None

    def _rebound_to_other_than_a_tensor(self, bindings: list[Binding], node: cst.CSTNode) -> bool:
        """The last assignment of the name before `node` (not its parameter binding) holds
        something the flow does not show to be a tensor."""
        tree = self.tree
        position = tree.order(node)
        before = [b for b in bindings if b.kind != "param" and b.order < position and not tree.is_inside(node, b.node)]
        if not before:
            return False
        last = max(before, key=lambda b: b.order)
        value = self._bound_value(last)
        return value is None or value.kind is not Kind.TENSOR

    def in_reach(self, node: cst.CSTNode) -> str | None:
        """A device expression already in reach at `node` (no declaration planned)."""
        return self._in_reach(node)

    def in_reach_or_planned(self, node: cst.CSTNode) -> DeviceChoice | None:
        """A device in reach at `node`, or one another rule's fix declares there: a rule that
        would not declare a device itself still uses that one, so that a second run, which
        finds the declaration in reach, changes nothing (idempotence)."""
        found = self._in_reach(node)
        if found is not None:
            return DeviceChoice(found)
        planned = self._planned(node)
        return DeviceChoice("device", planned) if planned is not None else None

    # -- 1. the evidence's own device -------------------------------------------------------------
    def _from_evidence(self, node: cst.CSTNode, evidence: tuple[Origin, ...]) -> str | None:
        for origin in evidence:
            device = origin.device
            if origin.kind != "move" or device is None or device is origin.node:
                continue
            parts = dotted_parts(device)
            if parts is None:
                continue
            if self._visible(parts, node):
                return ".".join(parts)
        return None

    def _visible(self, parts: list[str], node: cst.CSTNode) -> bool:
        """`parts[0]` is bound where `node` runs, to a value whose attribute path is a device."""
        root = parts[0]
        binding = self._binding(root, node)
        if binding is None:
            return False
        if len(parts) == 1:
            return is_device(self._bound_value(binding)) or (binding.kind == "param" and bool(DEVICE_NAME.match(root)))
        return binding.kind in ("param", "assign", "other") or binding.kind == "import"

    def _binding(self, name: str, node: cst.CSTNode) -> Binding | None:
        """The binding of `name` that `node` sees: in its own function, one made before it."""
        tree = self.tree
        here = tree.function_scope_of(node)
        scope: Scope | None = here
        position = tree.order(node)
        while scope is not None:
            bindings = scope.bindings.get(name)
            if bindings:
                if scope is here or (scope.kind == "module" and here.kind == "module"):
                    before = [b for b in bindings if b.kind == "param" or b.order < position]
                    before = [b for b in before if b.kind == "param" or tree.binds_on_the_way(b.node, node, name)]
                    return max(before, key=lambda b: b.order) if before else None
                if scope.kind == "module" and not self._module_level(bindings) and not self._reads(here, name):
                    return None  # bound under `if __name__ == "__main__":` only: absent on import
                return bindings[-1]
            scope = scope.visible_parent()
        return None

    def _reads(self, scope: Scope, name: str) -> bool:
        """The function reads the global `name` itself (dqn-pytorch's `select_action`, with
        `device=device` beside the `state.to('cuda')` to fix, where `device` is set under `if
        __name__ == "__main__":`): it already runs only where the script set that name, so a
        fix may use it too, and a second `device` declared in the function would be noise."""
        function = scope.function
        if function is None:
            return False
        key = (id(function), name)
        if key not in self._read_globals:
            self._read_globals[key] = any(n.value == name for n in read_names(function.body, deferred=True))
        return self._read_globals[key]

    def _module_level(self, bindings: list[Binding]) -> bool:
        return any(self.tree.parent(self.tree.statement_of(b.node) or b.node) is self.tree.module for b in bindings)

    def _bound_value(self, binding: Binding) -> Value | None:
        if binding.kind == "param":
            function = self.tree.enclosing(binding.node, cst.FunctionDef)
            info = self.program.functions.get(id(function)) if function is not None else None
            return self.program.arguments_of(info).get(binding.name) if info is not None else None
        return self.program.bound.get((id(binding.node), binding.name))

    def gpu_indices(self, code: str, node: cst.CSTNode) -> frozenset[int]:
        """The GPUs the device variable `code` names at `node` in the statement that binds it
        (`device = torch.device("cuda:2" if torch.cuda.is_available() else "cpu")`: {2}); none
        where it names no GPU by number (`"cuda"`, `args.device`)."""
        binding = self._binding(code, node) if code.isidentifier() else None
        if binding is None or binding.kind == "param":
            return frozenset()
        statement = self.tree.statement_of(binding.node)
        if statement is None:
            return frozenset()
        found = set()
        stack: list[cst.CSTNode] = [statement]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.SimpleString):
                text = current.evaluated_value
                number = gpu_number(text) if isinstance(text, str) else None
                if number is not None:
                    found.add(number)
            elif not isinstance(current, cst.BaseCompoundStatement) or current is statement:
                stack.extend(current.children)
        return frozenset(found)

    def may_be_an_index(self, code: str, node: cst.CSTNode) -> bool:
        """The device variable `code` at `node` may hold a GPU index, not a device (`device =
        args.device if args.device >= 0 else "cpu"` over a `type=int` option): `.to(0)` takes
        it, `torch.load(f, map_location=0)` raises TypeError."""
        if not code.isidentifier():
            return False
        binding = self._binding(code, node)
        value = self._bound_value(binding) if binding is not None else None
        return value is not None and value.index

    # -- 2. a device variable in reach --------------------------------------------------------------
    def _in_reach(self, node: cst.CSTNode, cuda_move: bool = False) -> str | None:
        """With `cuda_move` (a `.cuda()` to replace): not a variable that holds the CPU there
        (ocr.pytorch's `device = torch.device('cpu')`, set to `cuda:0` only after the
        `crnn.cuda()` it would replace: the model would stay on the CPU of a GPU machine)."""
        tree = self.tree
        here = tree.function_scope_of(node)
        scope: Scope | None = here
        names: set[str] = set()  # names some scope from `here` out to `scope` binds to a device
        while scope is not None:
            candidates: list[tuple[bool, int, str]] = []
            names |= self._device_names(scope)
            for name in names:
                if name not in scope.bindings:
                    continue
                binding = self._binding(name, node)
                if binding is None or binding.name != name:
                    continue
                # `DEVICE = 'cuda:0'` that is only the default of a `--device` option: the
                # option, which the run may set to "cpu", is the program's device
                overridden = name in self.program.option_defaults and self._option_device(node)
                if cuda_move and self._holds_the_cpu(binding):
                    continue
                if self._holds_device(binding) and not overridden:
                    candidates.append((name != "device", binding.order, name))
            if candidates:
                return min(candidates)[2]
            attribute = self._self_device(scope, node)
            if attribute:
                return attribute
            scope = scope.visible_parent()
        return self._option_device(node)

    def _holds_the_cpu(self, binding: Binding) -> bool:
        value = self._bound_value(binding)
        # `torch.device("cpu")`: not `torch.device(targets.device)`, where the data already is
        return value is not None and value.kind is Kind.DEVICE and value.place is Place.CPU and value.flag == "constant"

    def _holds_device(self, binding: Binding) -> bool:
        value = self._bound_value(binding)
        if is_device(value):
            return True
        if not DEVICE_NAME.match(binding.name):
            return False
        if binding.kind == "param":
            # a `device` parameter whose callers this run cannot see; not one named for a
            # purpose of its own (rome's `return_orig_weights_device="cuda"`, where copies of the
            # weights go, "cpu" to save memory: no place for the inputs)
            plain = (value is None or value.kind in (Kind.DEVICE, Kind.OTHER)) and binding.name in PLAIN_DEVICE_NAMES
            return plain and not (value is None and self._only_tested(binding))
        # `device = torch.device(targets.device)`: a device the author named, wherever it points
        return value is not None and value.kind is Kind.DEVICE and not value.tensor_type

    def _only_tested(self, binding: Binding) -> bool:
        """A `device` parameter its function only compares with a string (`if device != "cpu":
        model.cuda()`) and never moves anything to: a switch, which the callers may set to a
        GPU index (BrainMaGe's `infer_multi_4(cfg, device, ...)` gets `int(args.device)`), no
        device to hand to `map_location=`."""
        function = self.tree.enclosing(binding.node, cst.FunctionDef)
        info = self.program.functions.get(id(function)) if function is not None else None
        if info is None or binding.name in self.program.device_params(info):
            return False
        return compared_with_a_string(info.node, binding.name)

    def _device_names(self, scope: Scope) -> frozenset[str]:
        """The names of `scope` with a binding that holds a device, once per scope: only those
        can be a device in reach, so a fix's search need not look at every name of the
        module (a file of a thousand functions asked a thousand times)."""
        found = self._device_names_of.get(id(scope))
        if found is None:
            found = frozenset(
                name for name, bindings in scope.bindings.items() if any(self._holds_device(b) for b in bindings)
            )
            self._device_names_of[id(scope)] = found
        return found

    def _self_device(self, scope: Scope, node: cst.CSTNode) -> str | None:
        """`self.device` in a method of a class that holds a device in `self.device` (set before
        `node` when `node` is in the method that sets it)."""
        function = scope.function
        if function is None:
            return None
        info = self.program.functions.get(id(function))
        if info is None or info.klass is None or info.self_name is None:
            return None
        for name in ("device", "_device"):
            # the class's own choice, pinned to the CPU too (`self.device = torch.device("cpu")`),
            # as a `device = torch.device("cpu")` in reach is: never a second device beside it
            held = info.klass.attribute(name)
            if not (is_device(held) or (held is not None and held.kind is Kind.DEVICE and not held.tensor_type)):
                continue
            if (
                held is not None
                and held.flag == "relative"
                and held.origins
                and all(origin.kind == "module" for origin in held.origins)
            ):
                # `self.device = self.memory.device` in `__init__` (SlowFast's memory bank): where
                # the module's own buffer was as it was built, the CPU, stale once it moves
                continue
            if not self._set_after(function, info.self_name, name, node):
                return f"{info.self_name}.{name}"
        for name in sorted(info.klass.attrs):
            # the run's options kept on the instance (`self.args = args`): `self.args.device`
            value = info.klass.attrs[name]
            if value.kind is Kind.OTHER and is_device(value.attr("device")):
                return f"{info.self_name}.{name}.device"
        return None

    def _set_after(self, function: cst.FunctionDef, self_name: str, name: str, node: cst.CSTNode) -> bool:
        """`self.<name>` is first set in `function` after `node` (a `.cuda()` above the
        `self.device = ...` of an `__init__`): it does not exist yet at `node`."""
        tree = self.tree
        sets = [
            assign
            for assign in tree.data.within(tree.data.assigns, function)
            if any(
                isinstance(t.target, cst.Attribute)
                and t.target.attr.value == name
                and isinstance(t.target.value, cst.Name)
                and t.target.value.value == self_name
                for t in assign.targets
            )
        ]
        return bool(sets) and min(tree.order(assign) for assign in sets) > tree.order(node)

    def _device_option_out_of_reach(self) -> bool:
        """The program has a `--device` option of its own, and no step before found it at the fix
        (semisup-adv keeps it in a dictionary, `run_config['device']`, that its train function
        reads): a cuda-if-available device declared beside it would ignore `--device cpu` on a
        GPU machine. The hard-coded CUDA is reported, not fixed."""
        return any(
            value.kind is Kind.DEVICE and dest not in self.program.index_options
            for dest, value in self.program.options.items()
        )

    def _class_switches_the_gpu(self, node: cst.CSTNode) -> bool:
        """`node` is in a class whose code tests a user's GPU switch (`if self.gpu_mode:`): a
        cuda-if-available device declared there would disagree with the switch when the user
        turns it off on a GPU machine (manifold_mixup's GAN with `--gpu_mode`)."""
        klass = self.tree.enclosing(node, cst.ClassDef)
        if not isinstance(klass, cst.ClassDef):
            return False
        values = self.program.values
        return any(
            (tested := values.get(id(branch.test))) is not None and tested.flag == "choice"
            for branch in self.tree.data.within(self.tree.data.ifs, klass)
        )

    def _tests_a_gpu_switch_parameter(self, function: cst.FunctionDef) -> bool:
        """The function branches on whether a parameter named for the caller's GPU switch is
        set (3DUnetCNN's `batch_loss(..., n_gpus=0)` with `if n_gpus is not None:`): its device
        follows what the caller chose, and a cuda-if-available device declared there would
        disagree with it when the user turns the GPU off on a GPU machine. Its hard-coded CUDA
        is reported, not fixed."""
        info = self.program.functions.get(id(function))
        switches = {p.name.value for p in info.parameters() if CUDA_FLAG_NAME.match(p.name.value)} if info else set()
        if not switches:
            return False
        data = self.tree.data
        return any(
            self.tree.enclosing(branch, cst.FunctionDef) is function and reads_a_switch(branch.test, switches)
            for branch in data.within(data.ifs, function)
        )

    def _option_device(self, node: cst.CSTNode) -> str | None:
        """`args.device` where a `--device` option exists and `args = parser.parse_args()` is in reach."""
        devices = [
            dest
            for dest, value in self.program.options.items()
            if value.kind is Kind.DEVICE and dest not in self.program.index_options
        ]
        kept = sorted(self.program.namespace_devices)  # `args.device = ...` set by the program
        if not devices and not kept:
            return None
        for (binder_id, name), value in self.program.bound.items():
            if value.kind is not Kind.OTHER or not value.attrs:
                continue
            found = next((d for d in devices if any(k == d for k, _ in value.attrs)), None) or (
                kept[0] if kept else None
            )
            if found is None:
                continue
            binding = self._binding(name, node)
            if binding is not None and id(binding.node) == binder_id:
                return f"{name}.{found}"
        return None

    # -- 3. a function that receives the model ---------------------------------------------------------
    def _derived(self, node: cst.CSTNode, rule: str) -> DeviceChoice | None:
        """`device = next(model.parameters()).device` at the top of a function whose `model`
        parameter is a module at every call site, and which does not move it itself."""
        function = self.tree.enclosing(node, cst.FunctionDef)
        info = self.program.functions.get(id(function)) if function is not None else None
        arguments = self.program.arguments_of(info) if info is not None else {}
        if info is None or info.world != "program" or not arguments or not self.allow_declarations:
            return None
        scope = self.tree.data.scopes[id(info.node)]
        if "device" in scope.bindings:
            return None
        for param in info.parameters():
            name = param.name.value
            value = arguments.get(name)
            if value is None or value.kind is not Kind.MODULE or value.neutral or value.place is not Place.DEVICE:
                continue
            if name in info.param_moves or self._rebound(scope, name) or self._buffers_only(value):
                continue
            request = self._request(scope, f"next({name}.parameters()).device", node, rule)
            return DeviceChoice("device", request) if request is not None else None
        return None

    def _buffers_only(self, module: Value) -> bool:
        """A module of a project class that holds buffers and no parameter (SimSwap's
        `SoftErosion`, a blur kernel): `next(module.parameters())` raises StopIteration."""
        klass = self.program.classes.get(id(module.cls)) if module.cls is not None else None
        return klass is not None and not _owns_parameters(klass)

    @staticmethod
    def _rebound(scope: Scope, name: str) -> bool:
        return any(b.kind != "param" for b in scope.bindings.get(name, ()))

    # -- 4. a new declaration -------------------------------------------------------------------------
    @staticmethod
    def _declarable(evidence: tuple[Origin, ...]) -> bool:
        moves = [o for o in evidence if o.kind in ("move", "cuda-type")]
        if not moves:
            return True
        return all((o.kind == "cuda-type" or o.note in DECLARABLE) and not o.guarded for o in moves)

    def _planned(self, node: cst.CSTNode) -> DeclarationRequest | None:
        scope: Scope | None = self.tree.function_scope_of(node)
        here = scope
        while scope is not None:
            request = self.requests.get(id(scope))
            if request is not None and (scope is here or scope.kind == "module"):
                if here is scope and self.tree.order(request.anchor) > self.tree.order(node):
                    # declared further down (before the first fix that asked): Zero-DCE's
                    # `torch.load` above it would read `device` before it is bound
                    return None
                return request
            scope = scope.visible_parent()
        return None

    def _declare(self, node: cst.CSTNode, rule: str) -> DeviceChoice | None:
        if not self.allow_declarations:
            return None
        scope = self.tree.function_scope_of(node)
        if scope.kind != "module" and scope.function is None:
            return None
        if scope.function is not None and self._chooses_its_own_device(scope.function, node):
            return None
        if self._class_switches_the_gpu(node) or self._device_option_out_of_reach():
            return None
        if scope.function is not None and self._tests_a_gpu_switch_parameter(scope.function):
            return None
        may_query = self.module_may_query_cuda()
        if scope.kind == "module" and not may_query and not self._declared_in_main_block(scope, node):
            return None  # at import time, CUDA would be queried before the program picks its GPUs
        local_torch = "torch" in scope.bindings
        if scope.kind != "module" and (local_torch or self.torch_alias() is None):
            if may_query:
                # The function imports torch itself (further down), so `torch` is local to all of it
                # and a declaration at its top would fail; or the file has no top-level `import torch`
                # and one is added with a single module-level declaration that every function reaches.
                if "device" in scope.bindings:
                    return None
                scope = self.tree.data.module_scope
                planned = self.requests.get(id(scope))
                if planned is not None:
                    return DeviceChoice("device", planned)
            elif local_torch:
                return None  # neither the function's top nor import time is a safe place
        code = self._declaration_code()
        if code is None:
            return None
        request = self._request(scope, code, node, rule)
        return DeviceChoice("device", request) if request is not None else None

    def _declared_in_main_block(self, scope: Scope, node: cst.CSTNode) -> bool:
        """The module's declaration for `node` would go inside its `if __name__ == "__main__":`
        block, after the block sets CUDA_VISIBLE_DEVICES itself: it runs only in the script's own
        process, after its own choice, whatever another script that imports this file picks
        (GraphRNN's `main.py`, which `main_DeepGMG.py` star-imports)."""
        place = self._place(scope, node)
        return place is not None and self.tree.in_main_block(place[0]) and self.tree.in_main_block(node)

    def _chooses_its_own_device(self, function: cst.FunctionDef, node: cst.CSTNode) -> bool:
        """The function binds a device of its own after `node` (`self.device =
        torch.device("cuda:{}".format(gpuid[0]) if gpuid else "cpu")`, Dual-Path-RNN's
        `Separation`): a second device declared above it would disagree with the author's, and
        the author's does not exist yet where the fix is."""
        data = self.tree.data
        position = self.tree.order(node)
        for call in data.within(data.calls, function):
            callee = self.program.values.get(id(call.func))
            if callee is None or callee.qual != "torch.device" or self.tree.order(call) < position:
                continue
            statement = self.tree.statement_of(call)
            if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
                return True
        return False

    def _request(self, scope: Scope, code: str, node: cst.CSTNode, rule: str) -> DeclarationRequest | None:
        if id(scope) in self.requests:
            return self.requests[id(scope)]
        if "device" in scope.bindings:
            return None  # `device` already means something else here
        place = self._place(scope, node)
        if place is None:
            return None
        anchor, before = place
        needs_import = self.torch_alias() is None and code.startswith("torch.")
        if needs_import and (not self._torch_elsewhere() or self.tree.leading_imports_end() is None):
            return None  # `torch` means something else here, or there is no import block to add to
        request = DeclarationRequest(scope, code, anchor, before, needs_import, node)
        self.requests[id(scope)] = request
        return request

    def module_may_query_cuda(self) -> bool:
        """A module-level declaration asks `torch.cuda.is_available()` when the module is
        imported. That is too early where the program picks its GPUs afterwards, through
        CUDA_VISIBLE_DEVICES, in a function of this file or in another file of the run: CUDA
        reads the variable once, at its first query. (Set at this module's top level, the
        declaration simply goes after it.)"""
        if self.gpus_chosen_elsewhere:
            return False
        return all(self.tree.function_scope_of(s).kind == "module" for s in self._gpu_choices)

    @cached_property
    def _gpu_choices(self) -> list[cst.BaseStatement]:
        """Statements that set CUDA_VISIBLE_DEVICES (`os.environ["CUDA_VISIBLE_DEVICES"] = ...`,
        `os.environ.setdefault(...)`, `.update(...)`, `os.putenv(...)`), and calls of functions
        that do, in this file or (known by name, from the run's scan) in another."""
        found = []
        for assign in self.tree.data.assigns:
            for target in assign.targets:
                node = target.target
                if isinstance(node, cst.Subscript) and self._is_environ(node.value) and _mentions_choice(node):
                    found.append(self.tree.statement_of(assign))
        for call in self.tree.data.calls:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value in ("setdefault", "update", "__setitem__")
                and self._is_environ(func.value)
            ) or self._qual(func) == "os.putenv":
                if _mentions_choice(call):
                    found.append(self.tree.statement_of(call))
        direct = [s for s in found if s is not None]
        choosers = set(self.gpu_choice_functions)
        for statement in direct:
            function = self.tree.function_scope_of(statement).function
            if function is not None:
                choosers.add(function.name.value)
        for call in self.tree.data.calls:
            name = (
                call.func.value
                if isinstance(call.func, cst.Name)
                else call.func.attr.value
                if isinstance(call.func, cst.Attribute)
                else None
            )
            line = self.tree.statement_of(call)
            if name in choosers and line is not None:
                direct.append(line)
        return direct

    def _is_environ(self, expr: cst.BaseExpression) -> bool:
        return self._qual(expr) == "os.environ"

    def _qual(self, expr: cst.BaseExpression) -> str | None:
        value = self.program.values.get(id(expr))
        return value.qual if value is not None else self.tree.qualname(expr)

    def _place(self, scope: Scope, node: cst.CSTNode) -> tuple[cst.BaseStatement, bool] | None:
        """Module: after the leading imports (and after `import torch`), before `node`.
        Function: the first statement of the body, after a docstring. Either way, after the
        scope's own `os.environ["CUDA_VISIBLE_DEVICES"] = ...`."""
        tree = self.tree
        body = tree.body_of(scope)
        if not body:
            return None
        if scope.kind == "module":
            anchor = tree.leading_imports_end()
            torch_import = self._torch_import_statement()
            if torch_import is not None and (anchor is None or tree.order(torch_import) > tree.order(anchor)):
                anchor = torch_import
            if anchor is None or tree.order(anchor) > tree.order(node):
                return None
            return self._after_gpu_choices(scope, node, (anchor, False))
        first = body[0]
        place = (first, False) if is_docstring(first) else (first, True)
        return self._after_gpu_choices(scope, node, place)

    def _after_gpu_choices(
        self, scope: Scope, node: cst.CSTNode, place: tuple[cst.BaseStatement, bool]
    ) -> tuple[cst.BaseStatement, bool] | None:
        """A function that sets CUDA_VISIBLE_DEVICES declares the device after it does. The
        setting may sit in a block (`if args.gpu: os.environ[...] = args.gpu`): the declaration
        then goes after that whole statement, or after the setting itself where `node` is in the
        same block; anywhere else is unsafe and nothing is declared."""
        tree = self.tree
        body = tree.body_of(scope)
        for choice in self._gpu_choices:
            if tree.function_scope_of(choice) is not scope:
                continue
            top = next((s for s in [choice, *tree.ancestors(choice)] if tree.parent(s) is tree.parent(body[0])), None)
            if not isinstance(top, cst.BaseStatement):  # None: not in the scope's body
                return None
            if tree.is_inside(node, top):
                same_block = any(s is choice for s in tree.block_of(choice)) and any(
                    tree.is_inside(node, s) and s is not choice for s in tree.block_of(choice)
                )
                if not same_block or tree.order(choice) > tree.order(node):
                    return None
                top = choice
            elif tree.order(top) > tree.order(node):
                return None
            anchor = place[0]
            if place[1] or tree.order(top) > tree.order(anchor):
                place = (top, False)
        return place

    def torch_alias(self) -> str | None:
        """The name a top-level `import torch [as T]` binds (one inside `if __name__ == ...` or a
        function does not exist when the module's first statements run)."""
        for name, bindings in self.tree.data.module_scope.bindings.items():
            if bindings and all(b.kind == "import" and b.qualname == "torch" for b in bindings):
                if any(
                    self.tree.parent(self.tree.statement_of(b.node) or b.node) is self.tree.module for b in bindings
                ):
                    return name
        return None

    def _torch_elsewhere(self) -> bool:
        """`torch` is bound at module level only by imports of torch itself (nested ones)."""
        bindings = self.tree.data.module_scope.bindings.get("torch", [])
        return all(b.kind == "import" and b.qualname == "torch" for b in bindings)

    def _torch_import_statement(self) -> cst.BaseStatement | None:
        name = self.torch_alias()
        if name is None:
            return None
        for binding in self.tree.data.module_scope.bindings[name]:
            statement = self.tree.statement_of(binding.node)
            if statement is not None and self.tree.parent(statement) is self.tree.module:
                return statement
        return None

    def _declaration_code(self) -> str | None:
        torch = self.torch_alias() or "torch"
        quote = self.tree.quote
        if self.style == "accelerator":
            return f"{torch}.accelerator.current_accelerator() if {torch}.accelerator.is_available() else {torch}.device({quote('cpu')})"
        return f"{torch}.device({quote('cuda')} if {torch}.cuda.is_available() else {quote('cpu')})"

    def torch_name(self) -> str:
        return self.torch_alias() or "torch"


def _mentions_choice(node: cst.CSTNode) -> bool:
    """The statement names the CUDA_VISIBLE_DEVICES variable as a string literal."""
    found = []

    class Strings(cst.CSTVisitor):
        def visit_SimpleString(self, string: cst.SimpleString) -> None:
            found.append("CUDA_VISIBLE_DEVICES" in string.value)

    node.visit(Strings())
    return any(found)


_CONTAINER_HINTS = frozenset({"Dict", "dict", "List", "list", "Mapping", "MutableMapping", "Sequence", "Tuple", "tuple",
                              "Iterable", "Set", "set", "str", "int", "float", "bool"})  # fmt: skip


def _annotated_no_tensor(param: cst.Param) -> bool:
    """`losses: Dict[str, torch.Tensor]` (neuralop's loss aggregators): the author says the
    parameter is no tensor, so it has no `.device` to take."""
    if param.annotation is None:
        return False
    hint = param.annotation.annotation
    if isinstance(hint, cst.Subscript):
        hint = hint.value
    name = hint.attr.value if isinstance(hint, cst.Attribute) else hint.value if isinstance(hint, cst.Name) else None
    return name in _CONTAINER_HINTS

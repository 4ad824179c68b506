"""The file's classes in the device flow: modules, datasets, and other classes' instances.

A mixin of `Program` (program.py): how a class of this file is recognised (an `nn.Module`
or `Dataset` subclass, or a framework's class that places itself), what its instances are
when built (`Net()` is a module on the CPU; a Dataset's items are what `__getitem__`
returns), and what their attributes hold — seen from outside (`model.fc`, `trainer.model`),
or from the module's own methods, where layers, parameters and buffers live on the module's
device and a plain tensor attribute stays on the CPU (the evidence DEV012 needs).
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import arguments, operations
from devfix.analysis import torch_api as api
from devfix.analysis.classinfo import (
    ClassInfo,
    class_body_instances,
    defines_name,
    known_base,
    registered_items,
    through,
)
from devfix.analysis.linking import ClassSummary, FunctionSummary, MethodSummary
from devfix.analysis.scopes import dotted_name
from devfix.analysis.state import FlowState
from devfix.analysis.values import HOST, UNKNOWN, Kind, Origin, Place, Value, join, members

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.evaluate import Frame
    from devfix.analysis.functions import FunctionInfo

Args = list[tuple[cst.Arg, Value]]


# Methods of what a class commonly keeps besides layers (options, loggers, tensors, lists):
# `self.opt.get(...)` is no layer call.
_NOT_LAYER_METHODS = frozenset(
    {"get", "items", "keys", "values", "append", "extend", "update", "pop", "info", "debug", "warning", "error",
     "format", "split", "strip", "lower", "upper", "item", "size", "numel", "dim", "to", "cuda", "cpu", "detach",
     "clone", "float", "long", "half", "view", "reshape", "unsqueeze", "squeeze", "numpy", "tolist", "copy"}
)  # fmt: skip


def _layer_call(func: cst.BaseExpression, self_name: str | None) -> str | None:
    """`x` of `self.x(...)` or `self.x.conv1(...)`: an attribute used the way layers are."""
    if not isinstance(func, cst.Attribute) or self_name is None:
        return None
    owner = func.value
    if isinstance(owner, cst.Name) and owner.value == self_name:
        return func.attr.value  # a method's name too: only attributes set to a value count
    if isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == self_name:
        return owner.attr.value if func.attr.value not in _NOT_LAYER_METHODS else None
    return None


def _registers_module(func: cst.BaseExpression, call: cst.Call, self_name: str | None) -> bool:
    """`self.add_module(...)`, `self.register_module(...)`, `setattr(self, ...)`."""
    if isinstance(func, cst.Attribute) and func.attr.value in ("add_module", "register_module"):
        return isinstance(func.value, cst.Name) and func.value.value == self_name
    return (
        isinstance(func, cst.Name)
        and func.value == "setattr"
        and bool(call.args)
        and isinstance(call.args[0].value, cst.Name)
        and call.args[0].value.value == self_name
    )


def _method_of(summary: ClassSummary, name: str) -> FunctionSummary | None:
    """The class's own method `name` (`__init__`, `forward`), as a function its file analyses
    with its callers' facts."""
    method = summary.method(name)
    body = summary.node.body.body if isinstance(summary.node.body, cst.IndentedBlock) else ()
    node = next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
    if method is None or node is None:
        return None
    return FunctionSummary(node, method.params, path=summary.path, owner=summary.node.name.value)


def _hands_tensors(args: Args) -> bool:
    """`CrossEntropyLoss2d(class_weights)`: a tensor handed to the constructor may become the module's own
    (a loss's `weight=`), so the module is not taken for one without tensors. One handed tensors already on
    the device (`StyleLoss(gram(features))` of a moved network's output) holds them: moving it changes nothing."""
    return any(value.kind is Kind.TENSOR and value.place is not Place.DEVICE for _, value in args)


class ClassFlow(FlowState):
    """The class-related half of `Program` (the state it reads: state.py; set up in program.py)."""

    # -- torch.nn layers and wrappers ---------------------------------------------------------------
    def construct_layer(self, frame: Frame, node: cst.Call, qual: str, layer: str, args: Args) -> Value:
        device = arguments.keyword(args, "device")
        if device is None and any(arg.star == "**" for arg, _ in args) and layer not in api.NN_PARAMETER_FREE:
            return self.construct(frame, node, neutral=False, place=Place.UNKNOWN)  # `**dd` may hold device=
        if layer in api.NN_CONTAINERS:
            children = [v for _, v in args if v.kind is Kind.MODULE] + [
                item
                for _, v in args
                if v.kind is Kind.STRUCT
                for item in (v.items or (v.element,) if v.element else ())
                if item is not None and item.kind is Kind.MODULE
            ]
            places = [c.place for c in children if not c.neutral]
            place = Place.NONE
            for child in places:
                place = place.join(child)
            if place is Place.NONE:
                place = Place.CPU
            # a child the flow cannot tell (a project factory's result) may hold parameters
            opaque = any(v.kind not in (Kind.MODULE, Kind.STRUCT) for _, v in args) or any(
                item is None or item.kind is not Kind.MODULE
                for _, v in args
                if v.kind is Kind.STRUCT
                for item in (v.items or (v.element,))
            )
            neutral = bool(children) and all(c.neutral for c in children) and not opaque
            objs = tuple(member for c in children if c.obj is not None for member in members(c.obj))
            value = self.construct(frame, node, neutral=neutral, place=place, children=objs)
            return (
                value
                if place is Place.CPU
                else replace(
                    value,
                    origins=frozenset().union(*(c.origins for c in children))
                    if place is not Place.UNKNOWN
                    else frozenset(),
                )
            )
        if api.is_loss_class(layer):
            weight = arguments.keyword(args, "weight") or arguments.keyword(args, "pos_weight")
            if weight is None and layer in api.LOSSES_WITH_POSITIONAL_WEIGHT:
                positional = arguments.positional(args)
                weight = positional[0] if positional else None
            if layer == "CTCLoss":
                self.ctc_losses.add(id(node))
            if weight is None or weight[1].kind is not Kind.TENSOR:
                return self.construct(frame, node, neutral=True)
            place = weight[1].place
            return self.construct(frame, node, neutral=False, place=place)
        if layer in api.NN_PARAMETER_FREE:
            return self.construct(frame, node, neutral=True)
        place = arguments.target_place(device[1], device[0].value) if device is not None else Place.CPU
        return self.construct(frame, node, neutral=False, place=place if place is not Place.NONE else Place.CPU)

    def wrap(self, frame: Frame, node: cst.Call, qual: str, args: Args) -> Value:
        """`nn.DataParallel(model)`, `torch.compile(model)`: the same module, wrapped."""
        inner = args[0][1] if args else UNKNOWN
        if inner.kind is not Kind.MODULE:
            return UNKNOWN
        if qual.endswith("DataParallel"):
            return replace(inner, dp=True)
        return inner

    def linked_class(self, summary: ClassSummary) -> ClassInfo:
        """A class of another project file, seen through its summary: no methods to evaluate
        here, only what its instances are and what its methods do to their arguments."""
        return ClassInfo(
            summary.node,
            summary.kind,
            framework=summary.framework,
            opaque=summary.opaque,
            attrs=dict(summary.attrs),
            buffers=set(summary.buffers),
            moves_inputs=summary.moves_inputs,
            places_itself=summary.places_itself,
            linked=summary,
        )

    def instantiate_linked(self, frame: Frame, node: cst.Call, cls: ClassInfo, args: Args) -> Value:
        summary = cls.linked
        assert summary is not None
        init = summary.method("__init__")
        if init is not None:
            # `DataLoader(..., cuda=True)` of a class whose methods test `self.cuda` around `.cuda()`
            self.note_gpu_argument(
                node, args, init.params, init.device_params, init.cuda_switches, init.needs_gpu, method=True
            )
        if summary.kind == "other" and not (summary.framework or summary.opaque):
            # a plain class of another file (a `Trainer`): its file sees what is passed here
            self.note_linked_call(_method_of(summary, "__init__"), args)
        if summary.kind == "module" and not (summary.framework or summary.places_itself or summary.moves_inputs):
            children = tuple(v.obj for _, v in args if v.kind is Kind.MODULE and v.obj is not None)
            arguments.escape_all(frame, [(a, v) for a, v in args if v.kind is not Kind.MODULE])
            neutral = not summary.has_state and not children and not _hands_tensors(args)
            place, origins = _held_slot(frame, cls, args)
            return self.construct(
                frame, node, neutral=neutral, place=place, cls=cls, children=children, origins=origins
            )
        arguments.escape_all(frame, args)
        if summary.kind == "module":  # placing its own tensors, owning no weights: `.cuda()` copies nothing
            kept = summary.framework or summary.moves_inputs or summary.has_state or summary.opaque
            bare = not kept and not _hands_tensors(args) and all(v.kind is not Kind.MODULE for _, v in args)
            return Value(Kind.MODULE, Place.UNKNOWN, cls=cls.node, neutral=bare)
        if summary.kind == "dataset":
            element = summary.element
            if element is None:
                return Value(Kind.DATASET, Place.CPU, obj=id(node), cls=cls.node)
            if id(summary.node) in self.assume_unmoved and summary.unmoved_element is not None:
                element = summary.unmoved_element  # DEV006's what-if: its file removes the transfers
            return Value(Kind.DATASET, element.place, obj=id(node), element=element, cls=cls.node)
        # another file's class (or one whose base devfix cannot see): nothing is known of the
        # instance, but its methods' summaries still say which arguments are devices
        return Value(Kind.OTHER, Place.UNKNOWN, cls=cls.node)

    def call_linked_method(
        self, frame: Frame, node: cst.Call, method: MethodSummary, module: Value, args: Args
    ) -> Value:
        """`model.sample(n, device)` of a module class of another project file: what the method
        feeds to the weights meets them; it returns what its summary says."""
        inputs = []
        self.note_gpu_argument(
            node, args, method.params, method.device_params, method.cuda_switches, method.needs_gpu, method=True
        )
        for index, (arg, value) in enumerate(args):
            name = arguments.parameter_name(arg, index, method.params, star_unnamed=True)
            if name in method.inputs and value.kind is Kind.TENSOR and not value.scalar:
                inputs.append((arg.value, value))
            elif value.kind is Kind.MODULE:
                frame.escape(value)
        if inputs:
            self.meet(node, "call", inputs, module=module)
        if method.relative:
            return Value(
                Kind.TENSOR,
                module.place,
                module.origins if module.place is not Place.UNKNOWN else frozenset(),
                grad=not frame.no_grad,  # `with torch.no_grad(): pred = model.predict(x)`
            )
        returned = self._returned(frame, node, method.returns) if method.returns is not None else UNKNOWN
        return replace(returned, grad=False) if frame.no_grad and returned.grad else returned

    def define_class(self, frame: Frame, node: cst.ClassDef) -> None:
        if id(node) in self.classes:
            info = self.classes[id(node)]
        else:
            info = ClassInfo(node, "other")
            self.classes[id(node)] = info
            for statement in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
                if isinstance(statement, cst.FunctionDef):
                    info.methods[statement.name.value] = statement
        bases = []
        kind = "other"
        opaque = False
        plain = bool(node.bases)
        for base in node.bases:
            value = frame.expr(base.value)
            if value.ref is not None and id(value.ref) in self.classes:
                parent = self.classes[id(value.ref)]
                plain = plain and parent.plain and parent.linked is None
                bases.append(parent)
                if parent.kind != "other":
                    kind = parent.kind
                info.framework = info.framework or parent.framework
                info.moved_whole = info.moved_whole or parent.moved_whole
                opaque = opaque or parent.opaque
            elif value.qual is not None:
                plain = plain and value.qual in api.MODULE_ROOTS
                if (
                    value.qual in api.MODULE_ROOTS
                    or api.nn_class(value.qual) is not None
                    or api.is_model_class(value.qual)
                ):
                    kind = "module"
                elif value.qual in api.DATASET_ROOTS:
                    kind = "dataset"
                elif api.is_self_placing(value.qual) or "lightning" in value.qual.lower():
                    info.framework = True
                    info.moved_whole = info.moved_whole or value.qual.endswith("LightningModule")
                elif not known_base(value.qual):
                    opaque = True
            elif not (isinstance(base.value, cst.Name) and base.value.value in dir(builtins)):
                opaque = True
                plain = False
            else:
                plain = False
        info.kind = kind
        info.opaque = opaque and kind == "other"
        info.plain = plain and kind == "module" and not info.framework
        info.bases = tuple(bases)
        for decorator in node.decorators:
            frame.expr(decorator.decorator)
        for method in info.methods.values():
            for decorator in method.decorators:
                frame.expr(decorator.decorator)  # `@pytest.mark.skipif(not torch.cuda.is_available(), ...)`
        for _name, method in info.methods.items():
            function = self.functions[id(method)]
            function.klass = info
            params = function.node.params.params
            decorators = {dotted_name(d.decorator) for d in method.decorators}
            if params and not decorators & {"staticmethod", "classmethod"}:
                function.self_name = params[0].name.value
            function.world = "module" if kind == "module" and not info.framework else "program"
        info.places_itself = kind == "module" and (
            self._places_itself(info) or self._builds_a_self_placing_child(frame, info)
        )
        info.dynamic = any(self._updates_attributes(method) for method in info.methods.values())
        info.instances = class_body_instances(node, self.classes, frame.expr)

    def _updates_attributes(self, method: cst.FunctionDef) -> bool:
        """`self.__dict__.update(locals())`, `vars(self).update(cfg)`: what each attribute
        holds is decided at run time, whatever assignments the class spells out."""
        params = method.params.params
        if not params:
            return False
        self_name = params[0].name.value
        for call in self.data.within(self.data.calls, method):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "update"):
                continue
            owner = func.value
            if (
                isinstance(owner, cst.Attribute)
                and owner.attr.value == "__dict__"
                and isinstance(owner.value, cst.Name)
                and owner.value.value == self_name
            ):
                return True
            if (
                isinstance(owner, cst.Call)
                and isinstance(owner.func, cst.Name)
                and owner.func.value == "vars"
                and len(owner.args) == 1
                and isinstance(owner.args[0].value, cst.Name)
                and owner.args[0].value.value == self_name
            ):
                return True
        return False

    def _places_itself(self, info: ClassInfo) -> bool:
        init = info.methods.get("__init__")
        if init is None:
            return False
        for call in self.data.calls:
            func = call.func
            inside = self.data.order[id(init)] < self.data.order[id(call)] <= self.data.end_order.get(id(init), -1)
            if not inside:
                continue
            if isinstance(func, cst.Attribute) and func.attr.value in api.MOVE_METHODS:
                return True
            if any(a.keyword is not None and a.keyword.value == "device" for a in call.args):
                return True
        return False

    def _builds_a_self_placing_child(self, frame: Frame, info: ClassInfo) -> bool:
        """`self.crf = CRF(label_size, self.gpu)` in `__init__`, where `CRF` places itself (NCRF++'s
        layers each move themselves under the `HP_gpu` option): the module is placed as it is built."""
        init = info.methods.get("__init__")
        if init is None:
            return False
        for call in self.data.within(self.data.calls, init):
            if not isinstance(call.func, cst.Name):
                continue
            ref = frame.lookup(call.func.value).ref
            child = self.classes.get(id(ref)) if ref is not None else None
            if child is not None and child is not info and child.kind == "module" and child.places_itself:
                return True
        return False

    def module_attribute(self, frame: Frame, base: Value, name: str, node: cst.Attribute) -> Value:
        """`model.fc`, `self.fc` (module world), `model.module` (DataParallel)."""
        if name == "module" and base.dp:
            return replace(base, dp=False)
        cls = self.classes.get(id(base.cls)) if base.cls is not None else None
        if cls is not None:
            method = cls.method(name)
            if method is not None:
                return Value(Kind.OTHER, Place.UNKNOWN, ref=method, bound=base)
            if frame.world == "module" and base.origins and any(o.kind == "module" for o in base.origins):
                return self._own_attribute(frame, cls, name)
            known = cls.attribute(name)
            if known is not None:
                return self._member_of(base, known)
            if _only_its_own_attributes(cls) and name not in api.NN_MODULE_METHODS:
                return UNKNOWN  # `model.inp_size = (80, 160)`, set from outside (OC_SORT's ReID model)
        if name in ("training",):
            return HOST
        constant = base.attr(name)  # a class constant of a module another file handed over
        return constant if constant is not None else operations.program_member(base)

    def _member_of(self, module: Value, attribute: Value) -> Value:
        """An attribute of a module instance seen from outside (program world)."""
        if attribute.kind is Kind.MODULE and attribute.cls is not None and module.place is not Place.UNKNOWN:
            # `model.encoder(src, src_len)`: a submodule of a known class, where its holder is
            return Value(Kind.MODULE, module.place, module.origins, cls=attribute.cls, neutral=attribute.neutral)
        if attribute.kind is Kind.MODULE or (attribute.kind is Kind.TENSOR and attribute.place is not Place.CPU):
            return operations.program_member(module)
        if attribute.kind is Kind.HOST:
            return HOST
        return UNKNOWN

    def _own_attribute(self, frame: Frame, cls: ClassInfo, name: str) -> Value:
        """`self.x` inside a module's own methods: where it lives relative to the module."""
        local = frame.env.get(f"self.{name}")
        if local is not None:
            return local
        module = Origin("module", cls.node, name=name)
        if name in cls.buffers or any(name in base.buffers for base in cls.bases):
            return Value(Kind.TENSOR, Place.DEVICE, frozenset({module}))
        known = cls.attribute(name)
        if known is None:
            made = cls.instances.get(name)
            return Value(Kind.OTHER, Place.UNKNOWN, cls=made) if made is not None else UNKNOWN
        if known.kind is Kind.MODULE:
            if known.place is Place.UNKNOWN and not known.neutral and known.obj is None and known.cls is None:
                return UNKNOWN  # a layer handed in; one of the run's classes keeps the shape of its `forward`
            ctc = known.obj is not None and any(m in self.ctc_losses for m in members(known.obj))  # lengths: CPU
            return replace(known, place=Place.DEVICE, origins=frozenset({module}), obj=known.obj if ctc else None)
        if known.kind is Kind.TENSOR:
            if known.grad or known.member:  # nn.Parameter, frozen or not
                return Value(Kind.TENSOR, Place.DEVICE, frozenset({module}), grad=known.grad)
            return self._plain_tensor(cls, name, known)
        if known.kind is Kind.STRUCT:
            return registered_items(cls, known, module)
        return known if known.kind is Kind.HOST else UNKNOWN

    def _plain_tensor(self, cls: ClassInfo, name: str, known: Value) -> Value:
        """A tensor stored as a plain attribute: `.to(device)` on the module leaves it where it
        was made. Evidence for DEV012 only when it is written once, in `__init__`."""
        writes = cls.writes_seen.get(name, [])
        init = cls.methods.get("__init__")
        if _made_from_own_tensors(cls, known) and init is not None and all(self._inside(w, init) for w in writes):
            # `self.heightmap = calc_height_map(self.voxel_t)` in `__init__` (imaginaire's McVoxel):
            # computed from the module's buffers while they were on the CPU, and not registered
            known = replace(known, place=Place.CPU)
        if (
            known.place is not Place.CPU
            or not writes
            or init is None
            or not all(self._inside(w, init) for w in writes)
            or (len(writes) > 1 and not self._exclusive(writes))
        ):
            return known if known.place is not Place.CPU else Value(Kind.TENSOR, Place.UNKNOWN)
        origins = frozenset(Origin("attribute", write, name=name) for write in writes)
        return Value(Kind.TENSOR, Place.CPU, origins, scalar=known.scalar)

    def _tensor_or_none(
        self, klass: ClassInfo, writes: list[tuple[cst.CSTNode, Value]]
    ) -> list[tuple[cst.CSTNode, Value]]:
        """An attribute that `__init__` sets to a tensor or to `None` (`if/elif/else` branches,
        `torch.tensor(a) if a else None`): a tensor where it is set (None meets nothing)."""
        init = klass.methods.get("__init__")
        kept = []
        for target, value in writes:
            if init is None or not self._inside(target, init):
                return writes
            assign = self.data.parent.get(id(target))
            assign = self.data.parent.get(id(assign)) if isinstance(assign, cst.AssignTarget) else None
            expr = assign.value if isinstance(assign, cst.Assign) else None
            if _is_none(expr):
                continue
            if isinstance(expr, cst.IfExp) and (_is_none(expr.body) or _is_none(expr.orelse)):
                value = self.values.get(id(expr.orelse if _is_none(expr.body) else expr.body), value)
            kept.append((target, value))
        return kept if kept and all(v.kind is Kind.TENSOR for _, v in kept) else writes

    def _exclusive(self, writes: list[cst.CSTNode]) -> bool:
        """Each write in its own branch of one `if/elif/else` chain: one of them runs."""
        branches = []
        for write in writes:
            line = self.data.parent.get(id(self.data.parent.get(id(self.data.parent.get(id(write))))))
            block = self.data.parent.get(id(line))
            branch = self.data.parent.get(id(block))
            if not isinstance(branch, (cst.If, cst.Else)) or branch in branches:
                return False
            branches.append(branch)
        return True

    def _inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        order = self.data.order.get(id(node), -1)
        return self.data.order.get(id(ancestor), -1) < order <= self.data.end_order.get(id(ancestor), -1)

    def defines(self, instance: Value, name: str) -> bool:
        """The instance's class (of this file) defines `name`: a method, or an attribute it sets
        (settled by the last pass, or written already in this one: `self.fc0` of the first
        pass, once `__init__` ran, is a layer and not a method of unknown name)."""
        cls = self.classes.get(id(instance.cls)) if instance.cls is not None else None
        if cls is None:
            return False
        return (
            cls.method(name) is not None
            or cls.attribute(name) is not None
            or name in cls.buffers
            or name in cls.writes
            or name in cls.instances
        )

    def defines_method(self, instance: Value, name: str) -> bool:
        """The instance's project class (of this file or another) defines the method `name`
        itself: `sampler.cuda()` then calls that method, not torch's move."""
        cls = self.classes.get(id(instance.cls)) if instance.cls is not None else None
        if cls is None and instance.kind is Kind.MODULE:
            # a model of one of several project classes (`model = MatchingNet(...)` in one branch,
            # `ProtoNet(...)` in another): if any of them overrides `name`, it may be that one
            return any(defines_name(built, name) for built in self.built_classes.values())
        return cls is not None and defines_name(cls, name)

    def host_parameters(self, module: Value, args: Args) -> set[int]:
        """Arguments a module of this file keeps on the CPU (`pack_padded_sequence` lengths,
        NumPy): their nodes' ids. Also, a module that moves its inputs itself takes any."""
        cls = self.classes.get(id(module.cls)) if module.cls is not None else None
        if cls is None:
            return set()
        linked = cls.linked_method("forward")
        if linked is not None:
            return {
                id(arg.value)
                for index, (arg, _) in enumerate(args)
                if arguments.parameter_name(arg, index, linked.params, star_unnamed=True) in linked.keeps
            }
        forward = cls.method("forward")
        if forward is None:
            return set()
        info = self.functions[id(forward)]
        params = [p.name.value for p in info.parameters()][1:]
        found = set()
        for index, (arg, _value) in enumerate(args):
            name = arguments.parameter_name(arg, index, params, star_unnamed=True)
            if name is None:
                continue
            if name in info.moves_params or name in info.host_params:
                found.add(id(arg.value))
        return found

    def note_linked_forward(self, module: Value, args: Args) -> None:
        """`criterion(logits, y)` with a module class of another file: that file's `forward` sees
        the tensors passed here (a plain tensor attribute it meets them with: DEV012 there); with
        one of this file, its `forward` sees them in the next pass, as a function its calls."""
        cls = self.classes.get(id(module.cls)) if module.cls is not None else None
        if cls is None or cls.kind != "module" or module.place is not Place.DEVICE:
            return
        if cls.linked is not None:
            if cls.linked.kind == "module":
                self.note_linked_call(_method_of(cls.linked, "forward"), args)
            return
        forward = cls.methods.get("forward")
        info = self.functions.get(id(forward)) if forward is not None else None
        if info is None or info.world != "module" or any(arg.star for arg, _ in args):
            return
        names = [p.name.value for p in info.parameters()][1:]
        for index, (arg, value) in enumerate(args):
            name = arguments.parameter_name(arg, index, names)
            if name is not None and name in names:
                info.pending[name] = join(info.pending[name], value) if name in info.pending else value
        info.pending_calls += 1

    def _host_parameters(self, info: FunctionInfo) -> set[str]:
        """Parameters handed straight to host-side code (pack lengths, NumPy) in `info`."""
        params = {p.name.value for p in info.parameters()}
        start, end = self.data.order.get(id(info.node), -1), self.data.end_order.get(id(info.node), -1)
        found: set[str] = set()
        for meeting in self.meetings.values():
            if meeting.kind != "host" or not start < self.data.order.get(id(meeting.node), -2) <= end:
                continue
            found.update(n.value for n, _ in meeting.operands if isinstance(n, cst.Name) and n.value in params)
        # `lengths.cpu().numpy()`: the function copies the parameter to the host itself, so a
        # caller may pass it from either side (unless it also meets the weights)
        for call in self.data.within(self.data.calls, info.node):
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "cpu"
                and isinstance(func.value, cst.Name)
                and func.value.value in params
                and func.value.value not in info.module_inputs
            ):
                found.add(func.value.value)
        return found

    # -- instances of the file's classes ------------------------------------------------------------------
    def instantiate(self, frame: Frame, node: cst.Call, cls: ClassInfo, args: Args) -> Value:
        if cls.linked is not None:
            return self.instantiate_linked(frame, node, cls, args)
        init = cls.method("__init__")
        if cls.kind == "module":
            children = tuple(v.obj for _, v in args if v.kind is Kind.MODULE and v.obj is not None)
            if init is not None and self.functions[id(init)].world == "program":
                self.call_function(frame, node, self.functions[id(init)], args, bound=None)
            elif init is not None:
                self._note_held_modules(self.functions[id(init)], args)
                self._note_gpu_constructor(node, self.functions[id(init)], args)
                self.constructions.setdefault(id(init), []).append(node)
                if not cls.settled and self.functions[id(init)].klass is cls:
                    self.settle_constructor(self.functions[id(init)])
            bases_known = not cls.bases or _only_its_own_attributes(cls)  # MusicTransformer's metric subclasses
            neutral = not cls.has_state and not children and bases_known and not _hands_tensors(args)
            if cls.framework or cls.places_itself or cls.moves_inputs:
                arguments.escape_all(frame, args)
                # a class that only places a plain tensor itself (face-parsing's `OhemCELoss`
                # and its threshold) still owns nothing `.cuda()` would copy
                stateless = neutral and not (cls.framework or cls.moves_inputs)
                return Value(Kind.MODULE, Place.UNKNOWN, cls=cls.node, neutral=stateless)
            place, origins = _held_slot(frame, cls, args)
            return self.construct(
                frame, node, neutral=neutral, place=place, cls=cls, children=children, origins=origins
            )
        instance = Value(
            Kind.DATASET if cls.kind == "dataset" else Kind.OTHER, Place.UNKNOWN, cls=cls.node, obj=id(node)
        )
        if init is not None:
            self.call_function(frame, node, self.functions[id(init)], args, bound=instance)
        if cls.kind == "dataset":
            getitem = cls.method("__getitem__")
            if getitem is not None and not cls.settled and init is not None and self.functions[id(init)].klass is cls:
                # the first pass: what `__getitem__` returns now, not in a second pass
                self.settle_constructor(self.functions[id(init)], then=self.functions[id(getitem)])
            if getitem is not None:
                element = self.functions[id(getitem)].returns
                if element is not None:
                    return replace(instance, place=element.place, element=element)
            return replace(instance, place=Place.CPU)
        return instance

    def _note_held_modules(self, init: FunctionInfo, args: Args) -> None:
        """Which project class each module argument of a module's `__init__` is, joined over
        the instantiations: what its forward calls (`self.encoder(src, src_len)`) keeps on the CPU."""
        params = [p.name.value for p in init.parameters()][1:]
        for index, (arg, value) in enumerate(args):
            name = arguments.parameter_name(arg, index, params, star_unnamed=True)
            if name is None or value.kind is not Kind.MODULE or value.cls is None:
                continue
            key = (id(init.node), name)
            if key in self.init_modules and self.init_modules[key] is not value.cls:
                self.init_modules[key] = None
            elif key not in self.init_modules:
                self.init_modules[key] = value.cls

    def _note_gpu_constructor(self, node: cst.Call, init: FunctionInfo, args: Args) -> None:
        """`PNet()` of a module whose `__init__` calls `self.net.cuda()` under `use_gpu=True`
        unless told otherwise: building it asks for a GPU (a program-world `__init__` is noted
        as any function call is)."""
        names = [p.name.value for p in init.parameters()][1:]
        self.note_gpu_argument(node, args, names, self.device_params(init), self.cuda_switches(init), method=True)

    def instance_attribute(self, frame: Frame, base: Value, name: str, node: cst.Attribute) -> Value:
        cls = self.classes.get(id(base.cls)) if base.cls is not None else None
        if cls is None:
            return UNKNOWN
        method = cls.method(name)
        if method is not None:
            return Value(Kind.OTHER, Place.UNKNOWN, ref=method, bound=base)
        if frame.self_name is not None and frame.klass is cls and f"self.{name}" in frame.env:
            return through(cls, frame.place_of(frame.env[f"self.{name}"]))
        known = cls.attribute(name)
        return through(cls, frame.place_of(known)) if known is not None else UNKNOWN

    def classes_assign(self, frame: Frame, target: cst.Attribute, value: Value) -> None:
        """`self.x = value` in a method: recorded on the class; other attribute writes: a
        module put into a model after it moved (`model.fc = nn.Linear(...)`)."""
        owner = frame.expr(target.value)
        name = target.attr.value
        if isinstance(target.value, cst.Name) and target.value.value == frame.self_name and frame.klass is not None:
            frame.env[f"self.{name}"] = value
            frame.klass.writes.setdefault(name, []).append((target, value))
            return
        if owner.kind is Kind.OTHER and owner.attrs and value.kind is Kind.DEVICE and api.DEVICE_NAME.match(name):
            # `args.device = torch.device("cuda" if not args.disable_cuda ... else "cpu")` in a
            # `cli()` that returns the options: the program's own device, where `args` is in reach
            self.namespace_devices.add(name)
        if isinstance(target.value, cst.Name) and value.kind is Kind.HOST:
            # `args.mixmode = args.no_cuda and args.mixmode and torch.cuda.is_available()`: an
            # option the script's own code sets (in a function too: `args.cuda = not
            # args.no_cuda and ...` in `main()`), read back by its later tests
            frame.env[f"{target.value.value}.{name}"] = value
            frame.attribute_owners.add(target.value.value)
        if owner.kind is Kind.MODULE and value.kind is Kind.MODULE and not value.neutral:
            if value.obj is not None and owner.obj is not None:
                for member in members(owner.obj):
                    self.children.setdefault(member, []).extend(members(value.obj))
            self.meet(target, "submodule", [(target, value)], module=owner)

    def call_method(self, frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> Value:
        cls = self.classes.get(id(receiver.cls)) if receiver.cls is not None else None
        method = cls.method(name) if cls is not None else None
        if method is None:
            linked = cls.linked_method(name) if cls is not None else None
            if linked is not None:
                self.note_gpu_argument(
                    node, args, linked.params, linked.device_params, linked.cuda_switches, linked.needs_gpu, method=True
                )
            arguments.escape_all(frame, args)
            return UNKNOWN
        return self.call_function(frame, node, self.functions[id(method)], args, bound=receiver)

    def _registrations(self, klass: ClassInfo) -> set[str]:
        """The buffers and parameters the class's methods register by name; also notes
        whether `__init__` registers layers itself (`self.add_module(f"head_{i}", head)` over
        a list, `setattr(self, name, layer)`), after which a plain list's layers may all be
        registered."""
        found: set[str] = set()
        by_hand: set[str] = set()  # methods that register layers or parameters under computed names
        self_calls: dict[str, set[str]] = {}  # method -> the methods it calls on `self`
        for name, method in klass.methods.items():
            start, end = self.data.order[id(method)], self.data.end_order.get(id(method), -1)
            params = method.params.params
            self_name = params[0].name.value if params else None
            for call in self.data.calls:
                if not start < self.data.order[id(call)] <= end:
                    continue
                func = call.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value in ("register_buffer", "register_parameter")
                    and call.args
                ):
                    text = operations.string_of(call.args[0].value)
                    if text:
                        found.add(text)
                    elif func.attr.value == "register_parameter":
                        by_hand.add(name)  # `self.register_parameter(f"{name}-{i}", p)` over a list's layers
                if _registers_module(func, call, self_name):
                    by_hand.add(name)
                if (
                    isinstance(func, cst.Attribute)
                    and isinstance(func.value, cst.Name)
                    and func.value.value == self_name
                ):
                    self_calls.setdefault(name, set()).add(func.attr.value)
                layer = _layer_call(func, self_name)
                if layer is not None:
                    klass.called_attrs.add(layer)
        # `__init__` registers by hand, itself or through a helper of the class
        # (`self._add_to_parameters(layer.parameters(), ...)`)
        klass.registers_by_hand = "__init__" in by_hand or bool(self_calls.get("__init__", set()) & by_hand)
        return found

    def _moves_inputs(self, klass: ClassInfo) -> bool:
        """`forward` (or a method it is) moves its own tensor parameters: `x = x.to(self.device)`."""
        forward = klass.methods.get("forward") if klass.kind == "module" else None
        if forward is None:
            return False
        info = self.functions[id(forward)]
        info.moves_params = arguments.moved_parameters(self.data, self.values, forward)
        return bool(info.moves_params)


def _held_slot(frame: Frame, cls: ClassInfo, args: Args) -> tuple[Place, frozenset[Origin] | None]:
    """Where a wrapper of the modules it is handed is built: where they all are, when that is
    not the CPU (`elbo = SVI(model)` after `model.cuda()`); nowhere devfix can tell when one of
    them is a value it cannot follow; the CPU otherwise, as any module."""
    built = (Place.CPU, None)
    held = cls.held_params
    if not held:
        return built
    init = cls.linked_method("__init__") if cls.linked is not None else None
    if cls.linked is not None:
        params = list(init.params) if init is not None else []
    else:
        method = cls.method("__init__")
        params = [p.name.value for p in method.params.params[1:]] if method is not None else []
    slots = []
    for index, (arg, value) in enumerate(args):
        name = arguments.parameter_name(arg, index, params, star_unnamed=True)
        if name is None and arg.star:
            return Place.UNKNOWN, frozenset()
        if name not in held:
            continue
        if value.kind is not Kind.MODULE or value.obj is None:
            return Place.UNKNOWN, frozenset()
        slots.append(frame.slot_of(value.obj, (value.place, value.origins)))
    places = {slot[0] for slot in slots if slot is not None}
    if not slots or None in slots or len(places) != 1 or Place.CPU in places:
        return built
    origins: frozenset[Origin] = frozenset().union(*(slot[1] for slot in slots if slot is not None))
    return places.pop(), origins


def _is_none(node: cst.CSTNode | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _made_from_own_tensors(cls: ClassInfo, known: Value) -> bool:
    """A plain tensor attribute whose value the module derived from its own weights or buffers
    (every origin is the module) while it was built, before any move."""
    return (
        known.place is Place.DEVICE
        and bool(known.origins)
        and all(origin.kind == "module" for origin in known.origins)
        and not cls.places_itself
    )


def _only_its_own_attributes(cls: ClassInfo) -> bool:
    """A plain nn.Module subclass whose code sets every layer it has by name: an attribute its
    code never sets is none of its layers, parameters or buffers."""
    return (
        cls.plain
        and not cls.sets_attributes_wholesale
        and not cls.registers_by_hand
        and cls.method("__getattr__") is None
        and cls.method("__setattr__") is None
        and all(_only_its_own_attributes(base) for base in cls.bases)
    )

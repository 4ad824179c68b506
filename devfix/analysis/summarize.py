"""A file's summary for its importers, read off its settled program (see linking.py).

Only what the file itself shows is exported: a function's result counts as made by the
function only when its evidence lies inside the function's own body (a value that came in
through a parameter depends on the caller); a module method's result that lives on the
module's device is exported as such, whatever the module's place at the caller.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.checkpoints import saved_shapes
from devfix.analysis.classinfo import ClassInfo
from devfix.analysis.datasets import class_transfers
from devfix.analysis.functions import FunctionInfo
from devfix.analysis.linking import ClassSummary, Export, FunctionSummary, MethodSummary, ModuleSummary, exported
from devfix.analysis.program import Program
from devfix.analysis.reach import needs_gpu_when_called
from devfix.analysis.tree import Tree, class_constants, read_names
from devfix.analysis.values import GPU_SKIP, HOST, UNKNOWN, Kind, Place, Value


def summarize(tree: Tree, program: Program, path: str) -> ModuleSummary:
    names: dict[str, Export] = {}
    for name, value in program.module_env.items():
        if name in tree.data.globals:
            # `global CUDA` in a function of the module (TextGAN's `config.init_param`, which
            # sets `CUDA` from `--cuda`): the value at the top is only where it starts
            continue
        export = _export(tree, program, value)
        if export is not None:
            names[name] = export
    return ModuleSummary(path, names)


def _export(tree: Tree, program: Program, value: Value) -> Export | None:
    ref = value.ref
    if ref is not None and id(ref) in program.linked:
        return program.linked[id(ref)]  # re-exported (`from .model import Net` in `__init__.py`)
    if isinstance(ref, cst.ClassDef) and id(ref) in program.classes:
        return _class(tree, program, program.classes[id(ref)])
    if isinstance(ref, cst.FunctionDef) and id(ref) in program.functions:
        info = program.functions[id(ref)]
        returns = info.returns
        switch = _switch(tree, program, info, returns) if returns is not None else None
        return FunctionSummary(
            ref,
            _params(info),
            exported(returns, returned=True) if switch is not None else _result(tree, program, info),
            program.path,
            _keeps(program, info),
            program.device_params(info),
            program.cuda_switches(info),
            _needs_gpu(tree, program, ref),
            switch=switch.name.value if switch is not None else "",
            switch_default=switch is not None
            and isinstance(switch.default, cst.Name)
            and switch.default.value == "True",
            saves=saved_shapes(tree, program, ref),
            meets=_meets(program, info),
        )
    if value.kind is Kind.OTHER and value.qual is not None and ref is None and not value.attrs:
        return Value(Kind.OTHER, Place.UNKNOWN, qual=value.qual)  # `import torch`, which `from m import *` binds too
    if value.kind in (Kind.HOST, Kind.DEVICE, Kind.LOADER, Kind.DATASET) or (
        value.kind is Kind.OTHER and (value.attrs or value.flag == GPU_SKIP)
    ):
        return exported(value)
    if value.kind is Kind.STRUCT and value.keys:
        return exported(value)  # a configuration dict: `cfg_mnet = {"gpu_train": True, ...}`
    return None


MOVES = frozenset({"to", "cuda", "cpu", "type", "to_empty", "apply", "half", "float", "double"})


def _keeps(program: Program, info: FunctionInfo) -> frozenset[str]:
    """Parameters the function surely leaves where they are: never the receiver of a move
    (`model.to(...)`, `model.cuda()`), never handed to other code (`helper(model)`), never
    rebound. A caller's module passed there keeps its place."""
    params = set(_params(info))
    start, end = program.data.order.get(id(info.node), -1), program.data.end_order.get(id(info.node), -1)

    def inside(node: cst.CSTNode) -> bool:
        return start < program.data.order.get(id(node), -2) <= end

    for attribute in program.data.name_attributes:
        if attribute.attr.value in MOVES and isinstance(attribute.value, cst.Name) and inside(attribute):
            params.discard(attribute.value.value)
    for call in program.data.calls:
        if inside(call):
            params -= {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
    scope = info.scope
    params -= {name for name in params if len(scope.bindings.get(name, ())) > 1}
    return frozenset(params)


def _params(info: FunctionInfo) -> tuple[str, ...]:
    names = tuple(p.name.value for p in info.parameters())
    return names[1:] if info.self_name is not None and names and names[0] == info.self_name else names


def _result(tree: Tree, program: Program, info: FunctionInfo) -> Value | None:
    """What the function returns, for a caller in another file."""
    returns = info.returns
    if returns is None:
        return None
    if _switch(tree, program, info, returns) is not None:
        return UNKNOWN  # `if is_cuda: z = z.cuda()` in a method: the caller's argument decides
    if (
        returns.place is Place.CPU
        and returns.origins
        and not all(_inside(program, o.node, info.node) for o in returns.origins)
    ):
        return UNKNOWN  # it came in through a parameter: the caller's value, not the function's
    return exported(returns, returned=True)


def _switch(tree: Tree, program: Program, info: FunctionInfo, returns: Value) -> cst.Param | None:
    """The parameter of a GPU switch under which the result was moved to the device (`def
    gen_z(n, is_cuda): ... if is_cuda: z = z.cuda()`): where the result lives is each caller's
    choice (`gen_z(64, False)` is on the CPU), which the function's own flow, evaluated with
    the switch on, cannot say."""
    if returns.place is not Place.DEVICE:
        return None
    params = {p.name.value: p for p in info.parameters()}
    for origin in returns.origins:
        if origin.kind != "move":
            continue
        for ancestor in tree.ancestors(origin.node):
            if ancestor is info.node:
                break
            if not isinstance(ancestor, (cst.If, cst.IfExp)):
                continue
            tested = program.values.get(id(ancestor.test))
            if tested is None or tested.flag != "choice":
                continue
            named = [params[n.value] for n in read_names(ancestor.test) if n.value in params]
            if named:
                return named[0]
    return None


def _meets(program: Program, info: FunctionInfo) -> frozenset[tuple[str, str]]:
    """The pairs of parameters the function hands, as they are, to a module or a torch function
    (`def loss_fn(outputs, labels): return nn.CrossEntropyLoss()(outputs, labels)`): a caller's
    tensors for them meet at its call. Read off the calls, as the parameters of a function
    nothing in its file calls have no known kind."""
    params = set(_params(info))
    found = set()
    for call in program.data.within(program.data.calls, info.node):
        callee = program.values.get(id(call.func))
        if callee is None or not (callee.kind is Kind.MODULE or (callee.qual or "").startswith("torch.")):
            continue
        named = sorted({a.value.value for a in call.args if isinstance(a.value, cst.Name) and a.value.value in params})
        if len(named) >= 2:
            found.add((named[0], named[1]))
    return frozenset(found)


def _inside(program: Program, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    order = program.data.order
    return order.get(id(function), -1) < order.get(id(node), -2) <= program.data.end_order.get(id(function), -1)


def _class(tree: Tree, program: Program, cls: ClassInfo) -> ClassSummary:
    methods: dict[str, MethodSummary] = {}
    _collect_methods(tree, program, cls, methods)
    attrs = {}
    for klass in (*reversed(_lineage(cls)),):
        for name, value in klass.linked.attrs if klass.linked is not None else klass.attrs.items():
            attrs[name] = _attribute(value)
        if klass.linked is None:
            attrs.update({name: HOST for name in class_constants(klass.node) if name not in attrs})
    element = None
    if cls.kind == "dataset":
        getitem = cls.method("__getitem__")
        if getitem is not None and id(getitem) in program.functions:
            returns = program.functions[id(getitem)].returns
            element = exported(returns, collated=True) if returns is not None else None
        elif cls.linked_method("__getitem__") is None and any(b.linked is not None for b in _lineage(cls)):
            element = next((b.linked.element for b in _lineage(cls) if b.linked is not None), None)
    return ClassSummary(
        cls.node,
        cls.kind,
        framework=cls.framework,
        opaque=cls.opaque,
        places_itself=cls.places_itself,
        moves_inputs=cls.moves_inputs or any(b.moves_inputs for b in _lineage(cls)),
        has_state=cls.has_state,
        held_params=cls.held_params,
        buffers=frozenset(cls.buffers).union(*(b.buffers for b in _lineage(cls))),
        attrs=tuple(attrs.items()),
        methods=tuple(methods.items()),
        element=element,
        path=program.path,
        moves_items_for=moves_items_for(tree, program, cls) if cls.kind == "dataset" else "",
    )


def moves_items_for(tree: Tree, program: Program, cls: ClassInfo) -> str:
    """The one other file that names a dataset class whose `__getitem__` moves its items to the
    device, when that file's loaders may take the transfers over (DEV006 across files): every
    transfer can go (nothing transforms the moved tensor), none is in `__init__`, and no loader
    of this file reads the class. Only one such file, so that its loops alone decide."""
    users = program.named_by.get(cls.node.name.value, frozenset()) - {program.path}
    if len(users) != 1 or program.data.parent.get(id(cls.node)) is not program.module:
        return ""
    transfers = class_transfers(tree, program, cls)
    if not transfers or any(t.where != "__getitem__" or t.reason is not None for t in transfers):
        return ""
    if any(info.dataset.cls is cls.node for info in program.loaders.values()):
        return ""
    return next(iter(users))


def _lineage(cls: ClassInfo) -> list[ClassInfo]:
    found = [cls]
    for base in cls.bases:
        found.extend(_lineage(base))
    return found


def _collect_methods(tree: Tree, program: Program, cls: ClassInfo, methods: dict[str, MethodSummary]) -> None:
    """Every method an instance has, nearest definition first."""
    if cls.linked is not None:
        for name, method in cls.linked.methods:
            methods.setdefault(name, method)
        return
    for name, node in cls.methods.items():
        if name in methods or id(node) not in program.functions:
            continue
        info = program.functions[id(node)]
        returns = info.returns
        relative = (
            returns is not None
            and returns.place is Place.DEVICE
            and bool(returns.origins)
            and all(o.kind == "module" for o in returns.origins)
        )
        methods[name] = MethodSummary(
            _params(info),
            frozenset(info.module_inputs),
            frozenset(info.moves_params | info.host_params),
            None if relative else _result(tree, program, info),
            relative,
            program.device_params(info),
            program.cuda_switches(info),
            _needs_gpu(tree, program, node),
            saved_shapes(tree, program, node),
            tuple((length, exported(v, returned=True)) for length, v in sorted(info.tuples_returned.items())),
        )
    for base in cls.bases:
        _collect_methods(tree, program, base, methods)


def _needs_gpu(tree: Tree, program: Program, function: cst.FunctionDef) -> bool:
    """A function of this file asks for a GPU whenever it is called, or the file itself cannot
    be imported without one (it imports a CUDA extension): an importer that calls it, even one
    that imports it inside a function (point-transformer's `test.py` picks its model class in
    `main`), runs only on a GPU machine."""
    return program.imports_cuda_extension or needs_gpu_when_called(tree, program, function)


def _attribute(value: Value) -> Value:
    """A class attribute for code of another file: a layer or a parameter is the module's own
    (where the module is); anything else as `exported` says."""
    if value.kind is Kind.MODULE:
        return Value(Kind.MODULE, Place.CPU, neutral=value.neutral)
    if value.kind is Kind.TENSOR and value.grad:
        return Value(Kind.TENSOR, Place.CPU, grad=True)
    return exported(value)

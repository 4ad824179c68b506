"""DEV003 model-placement: a model built on the CPU that meets device tensors moves where it is built."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.facts import FileFacts
from devfix.analysis.plan import Move
from devfix.analysis.program import OptimizerInfo
from devfix.analysis.tree import Tree
from devfix.analysis.values import Place, Value
from devfix.edits import Remove, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import describe_built, evidence_line, expression, grandparent, move_to

NO_DEVICE_HINT = "move it to the device its inputs are on, where it is built: `.to(device)`"


class ModelPlacement(Rule):
    code = "DEV003"
    name = "model-placement"
    summary = "A model built on the CPU meets tensors on the device; move it where it is built."
    fix_summary = "A model (or a weighted loss) that is used but never moved gets `.to(device)` where it is built, before its optimizer; so does a layer put into a model after the model moved."
    verify_hint = "move the model where it is built, before the optimizer: model = Net().to(device)"
    why = """
A model's weights stay on the CPU until the model is moved. When its inputs are on the GPU
(moved with `.to(device)` or `.cuda()`), the first forward fails with "Input type
(torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same" or
"Expected all tensors to be on the same device". devfix moves the model where it is built,
before any optimizer is made from its parameters (optimizers that create state at
construction, such as Adagrad, would keep that state on the CPU), with the device its inputs
were moved to. Loss modules that hold tensors (`weight=`, `pos_weight=`) move too, and so
does a layer put into a model after the model moved (`model.fc = nn.Linear(512, 10)`).

devfix only does this when it has seen both facts: the model is on the CPU where it meets
its inputs, and those inputs are definitely on the device. A program that runs everything on
the CPU (a test, a demo) is left alone, and so is a model built by code devfix cannot see.
"""
    example = """
model = Net()
optimizer = torch.optim.Adagrad(model.parameters())
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = criterion(model(x), y)
"""
    use_instead = """
model = Net().to(device)
optimizer = torch.optim.Adagrad(model.parameters())
for x, y in loader:
    x, y = x.to(device), y.to(device)
    loss = criterion(model(x), y)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2)\nout = model(torch.ones(1, 4).to(device))\n",
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\nout = model(torch.ones(1, 4).to(device))\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nout = model(torch.ones(1, 4).to(device))\n",
        "import torch\nfrom torch import nn\nlayer = nn.Linear(4, 2)\nprint(layer(torch.ones(1, 4)))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        moved = set()
        for move in facts.plan.by_rule(self.code):
            moved.add(id(move.origin.node))
            if all(o.kind == "module" for o in move.evidence) and _built_for_its_caller(facts, move.origin.node):
                continue  # a head's `ModuleList` that `__init__` gets back and keeps: a submodule in the making
            yield self._move(ctx, move)
        reported = set()
        for optimizer in facts.program.optimizers:
            finding = self._moved_after_optimizer(ctx, optimizer, moved)
            if finding is not None and id(finding.node) not in reported:
                reported.add(id(finding.node))
                yield finding

    def _move(self, ctx: RuleContext, move: Move) -> Finding:
        facts = ctx.facts
        call = move.origin.node
        what = describe_built(facts, call)
        met = evidence_line(facts, move.evidence)
        message = f"{what} is built on the CPU and meets {met}"
        if not move.fixable:
            return self.finding(call, f"{message}; not moved: {move.reason}", hint=NO_DEVICE_HINT)
        if _copies_gradients(facts, call):
            reason = "its class copies gradients into another model (`shared._grad = local.grad`), which must share its device"
            hint = "keep the local model and its inputs on the shared model's device (the CPU), or move both"
            return self.finding(call, f"{message}; not moved: {reason}", hint=hint)
        if all(o.kind == "module" for o in move.evidence):
            # a layer built inside a module's own method meets its activations: their device
            relative = facts.devices.relative(call, move.meetings)
            if relative is None:
                return self.finding(call, message, hint=NO_DEVICE_HINT)
            return self.finding(
                call,
                f"{message}; moved to `{relative}` where it is built",
                [Replace(call, move_to(expression(call), ctx.expression(relative)))],
            )
        device = facts.devices.at(call, self.code, move.evidence)
        if device is None:
            return self.finding(call, f"{message}; no device expression is in reach here", hint=NO_DEVICE_HINT)
        new = move_to(expression(call), ctx.expression(device.code))
        return self.finding(
            call, f"{message}; moved to `{device.code}` where it is built", [Replace(call, new)], device=device
        )

    # -- moved, but after an optimizer was built ---------------------------------------------------
    def _moved_after_optimizer(self, ctx: RuleContext, optimizer: OptimizerInfo, moved: set[int]) -> Finding | None:
        facts = ctx.facts
        tree = facts.tree
        module = optimizer.module
        if module is None or module.obj is None or module.place is not Place.CPU:
            return None
        # SGD, Adam...: their state is made at the first step, wherever the parameters are then,
        # unless it was loaded (`optimizer.load_state_dict`) while the parameters were on the CPU
        loads = [
            call
            for call, value in facts.program.optimizer_loads
            if value.obj == module.obj and (value.place is Place.CPU or _at_construction(facts, call))
        ]
        if optimizer.qual not in EAGER_STATE_OPTIMIZERS and not loads:
            return None
        constructs = [o for o in module.origins if o.kind == "construct"]
        if len(constructs) != 1 or id(constructs[0].node) in moved:
            return None
        build = constructs[0].node
        later = [
            (call, value)
            for call, value, place in facts.program.module_moves
            if value.obj == module.obj and place is Place.DEVICE and tree.order(call) > tree.order(optimizer.call)
        ]
        if not later:
            return None
        call, _ = min(later, key=lambda item: tree.order(item[0]))
        statement = tree.statement_of(call)
        build_statement = tree.statement_of(build)
        if statement is None or build_statement is None or not self._alone(statement, call):
            return None
        across = tree.parent(statement) is not tree.parent(build_statement)
        if across and not _moved_in_a_later_method(facts, module, build_statement, statement):
            return None
        if (
            not across
            and optimizer.qual not in EAGER_STATE_OPTIMIZERS
            and not any(tree.order(optimizer.call) < tree.order(load) < tree.order(call) for load in loads)
        ):
            return None  # the state was loaded somewhere else than between the optimizer and the move
        func = call.func  # `model.to(device)`: `_alone` said so
        if (
            not across
            and isinstance(func, cst.Attribute)
            and _called_between(tree, func.value, build_statement, statement)
        ):
            # trained or run on the CPU before the move (a notebook that moves it later on
            # purpose): moving it where it is built would change what those calls meet
            return self.finding(
                call,
                f"{describe_built(facts, build)} is moved to the device after an optimizer was built "
                f"from its parameters (line {tree.position(optimizer.call)[0]}) and after it was "
                "used on the CPU; its optimizer state stays on the CPU",
                hint="move the model to the device where it is built, and its inputs with it",
            )
        moved_value = facts.value(call)
        evidence = list(moved_value.origins) if moved_value is not None else []
        device = facts.devices.at(build, self.code, evidence)
        if across and device is not None and not _set_before(tree, device.code, build_statement):
            device = None  # `self.device` is set after the model is built in `__init__`
        if optimizer.qual in EAGER_STATE_OPTIMIZERS:
            message = (
                f"{describe_built(facts, build)} is moved to the device after an optimizer was built from its parameters "
                f"(line {tree.position(optimizer.call)[0]}); optimizer state made at construction stays on the CPU"
            )
        else:
            message = (
                f"{describe_built(facts, build)} is moved to the device after its optimizer's state was loaded "
                f"(line {tree.position(loads[0])[0]}); the loaded state stays on the CPU"
            )
        if device is None:
            return self.finding(
                call, message, hint="move the model to the device where it is built, before the optimizer"
            )
        new = move_to(expression(build), ctx.expression(device.code))
        if across:
            # the other method's move stays: it runs again after anything that took the model
            # back to the CPU (a `save` that calls `self.model.cpu()`), and is a no-op otherwise
            return self.finding(call, f"{message}; also moved where it is built", [Replace(build, new)], device=device)
        return self.finding(
            call, f"{message}; moved where it is built", [Replace(build, new), Remove(statement)], device=device
        )

    @staticmethod
    def _alone(statement: cst.BaseStatement, call: cst.Call) -> bool:
        """`model.to(device)` / `model = model.cuda()` alone on its line."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        small = statement.body[0]
        func = call.func
        if not (isinstance(func, cst.Attribute) and _plain_reference(func.value)):
            return False
        if isinstance(small, cst.Expr):
            return small.value is call
        if isinstance(small, cst.Assign):
            targets = small.targets
            return small.value is call and len(targets) == 1 and targets[0].target.deep_equals(func.value)
        return False


# Optimizers that make per-parameter state in their constructor (torch.optim.Adagrad's `sum`):
# that state stays where the parameters were. The others make it at their first step.
EAGER_STATE_OPTIMIZERS = frozenset({"torch.optim.Adagrad", "torch.optim.adagrad.Adagrad"})


def _plain_reference(expr: cst.BaseExpression) -> bool:
    """`model` or `self.model`: a name, or an attribute of a name."""
    return isinstance(expr, cst.Name) or (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name))


def _called_between(tree: Tree, callee: cst.BaseExpression, first: cst.CSTNode, last: cst.CSTNode) -> bool:
    """`callee(...)` is called after statement `first` and before statement `last`."""
    start, end = tree.order(first), tree.order(last)
    return any(c.func.deep_equals(callee) and start < tree.order(c) < end for c in tree.data.calls)


def _moved_in_a_later_method(
    facts: FileFacts, module: Value, build: cst.BaseStatement, move: cst.BaseStatement
) -> bool:
    """`self.model = Net()` and its optimizer in `__init__`, `self.model.to(self.device)` in
    another method of the same class (`fit`), each a statement of its method's own body, and
    the model never called anywhere while it is still on the CPU: `__init__` runs before any
    other method, so building it on the device changes nothing but the optimizer's state."""
    tree = facts.tree
    init, method = grandparent(tree, build), grandparent(tree, move)
    if not (isinstance(init, cst.FunctionDef) and isinstance(method, cst.FunctionDef)):
        return False
    if init.name.value != "__init__" or method is init or _at_construction(facts, move):
        return False
    klass = tree.class_of_method(init)
    if klass is None or tree.class_of_method(method) is not klass:
        return False
    for meeting in facts.program.meetings.values():
        called = meeting.module
        if (
            meeting.kind == "call"
            and called is not None
            and called.obj == module.obj
            and called.place is not Place.DEVICE
        ):
            return False
    return True


def _at_construction(facts: FileFacts, node: cst.CSTNode) -> bool:
    """`node` runs while an instance is built: in `__init__`, or in a method only `__init__` calls."""
    function = facts.tree.enclosing(node, cst.FunctionDef)
    info = facts.program.functions.get(id(function)) if function is not None else None
    return info is not None and info.klass is not None and facts.program.construction_time(info)


def _set_before(tree: Tree, device: str, build: cst.BaseStatement) -> bool:
    """A device expression usable where the model is built in `__init__`: not an attribute of
    `self`, or one assigned by a statement of `__init__`'s body before the build."""
    parts = device.split(".")
    init = grandparent(tree, build)
    params = init.params.params if isinstance(init, cst.FunctionDef) else ()
    if len(parts) < 2 or not params or parts[0] != params[0].name.value:
        return True  # `device`, a parameter or a global: visible in `__init__` (devices.at said so)
    for statement in tree.block_of(build):
        if statement is build:
            return False
        for small in getattr(statement, "body", ()):
            if isinstance(small, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                if any(
                    isinstance(t, cst.Attribute)
                    and isinstance(t.value, cst.Name)
                    and t.value.value == parts[0]
                    and t.attr.value == parts[1]
                    for t in targets
                ):
                    return True
    return False


def _built_for_its_caller(facts: FileFacts, build: cst.CSTNode) -> bool:
    """`cls_convs = nn.ModuleList()` in a module's own method that fills it and returns it
    (nanodet's `_buid_not_shared_head`, whose caller keeps it as an attribute): the layers
    become the module's own and move with it. Moving them where they are built took
    `next(self.parameters())` of a module that has none yet (StopIteration)."""
    tree = facts.tree
    function = tree.enclosing(build, cst.FunctionDef)
    statement = tree.statement_of(build)
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
    if not isinstance(function, cst.FunctionDef) or not isinstance(small, cst.Assign) or small.value is not build:
        return False
    return tree.returns_a_name(function, {t.target.value for t in small.targets if isinstance(t.target, cst.Name)})


def _copies_gradients(facts: FileFacts, build: cst.CSTNode) -> bool:
    """`global_param._grad = local_param._grad` in the class that builds the model (A3C's
    workers, Hogwild training): a local model hands its gradients to a shared one kept in CPU
    shared memory, so the two must live on one device, and the shared one cannot move; moving
    the local one breaks the copy."""
    tree = facts.tree
    klass = tree.enclosing(build, cst.ClassDef)
    if klass is None:
        return False
    for assign in facts.data.assigns:
        if not tree.is_inside(assign, klass):
            continue
        value = assign.value
        copied = isinstance(value, cst.Attribute) and value.attr.value in ("grad", "_grad")
        if copied and any(
            isinstance(target.target, cst.Attribute) and target.target.attr.value in ("grad", "_grad")
            for target in assign.targets
        ):
            return True
    return False

"""The placement plan: which CPU values must move to the device, decided once per file.

Seeds are the *conflicts*: meetings where a definite CPU value meets a definite DEVICE value
(`values.Meeting.conflict`). Every CPU value there must reach the device, at its origin (the
constructor of a model, the loop that yields a batch, the factory that makes a tensor...).
Moving an origin changes every other meeting it takes part in, so the plan follows them: a
model moved to the device needs the other inputs it meets moved too. The origins reached
this way form a *component*; a component is fixed only if every origin in it can be fixed
(the fixed program must be consistent), else each origin is reported with what to do.

Which rule owns which origin is decided here, once, so two rules never fix the same value:
a module built (DEV003; DEV013 inside a plain list of layers), a batch or a slice of data
in a loop (DEV004), a factory in a module's own method (DEV007) or in a program (DEV008), a
plain tensor attribute of a module (DEV012).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.tree import Tree
from devfix.analysis.values import Meeting, Origin, Place, takes_part

OriginKey = tuple[str, int, Optional[str], int]


def origin_key(origin: Origin) -> OriginKey:
    return (origin.kind, id(origin.node), origin.name, id(origin.binder) if origin.binder is not None else 0)


@dataclass(eq=False)
class Move:
    """One origin the plan moves to the device (or reports, when its component cannot be fixed)."""

    origin: Origin
    rule: str
    component: int
    meetings: list[Meeting] = field(default_factory=list)  # the conflicts and meetings that need it
    evidence: list[Origin] = field(default_factory=list)  # what is on the device in those meetings
    fixable: bool = True
    reason: str = ""  # why its component is not fixed


class Plan:
    def __init__(self, tree: Tree, program: Program) -> None:
        self.tree = tree
        self.program = program
        self.moves: dict[OriginKey, Move] = {}
        self.host_uses: dict[OriginKey, list[Meeting]] = {}
        self.dataset_sources = _dataset_sources(program)
        self._build()

    def by_rule(self, code: str) -> list[Move]:
        found = [move for move in self.moves.values() if move.rule == code]
        return sorted(found, key=lambda move: self.tree.order(move.origin.node))

    def move_of(self, origin: Origin) -> Move | None:
        return self.moves.get(origin_key(origin))

    # -- building ------------------------------------------------------------------------------------
    def _build(self) -> None:
        index: dict[OriginKey, list[Meeting]] = {}
        origins: dict[OriginKey, Origin] = {}
        for meeting in self.program.meetings.values():
            if meeting.kind == "host":
                for _, value in meeting.operands:
                    if value.place is Place.CPU:
                        for origin in value.origins:
                            self.host_uses.setdefault(origin_key(origin), []).append(meeting)
                continue
            for origin in _origins_at(meeting, Place.CPU):
                if origin.kind == "construct" and _moved_by_the_next_statement(self.tree, origin.node):
                    continue  # the program places the module itself, one line later
                key = origin_key(origin)
                origins.setdefault(key, origin)
                index.setdefault(key, []).append(meeting)
        kept = [m for m in self.program.meetings.values() if not _stays_in_a_buffer(self.tree, m, index)]
        if len(kept) < len(self.program.meetings):
            index = {key: [m for m in found if m in kept] for key, found in index.items()}
        seeds = [m for m in kept if m.kind != "host" and m.conflict()]
        component = 0
        for seed in sorted(seeds, key=lambda m: self.tree.order(m.node)):
            start = [origin_key(o) for o in _origins_at(seed, Place.CPU) if origin_key(o) not in self.moves]
            unplaced = _cpu_without_origin(seed)
            if not start and not unplaced:
                continue
            component += 1
            members = self._spread(start, index, origins, component)
            if unplaced:
                self._report_unplaced(seed, component, members)
            self._decide(members)

    def _spread(
        self,
        start: list[OriginKey],
        index: dict[OriginKey, list[Meeting]],
        origins: dict[OriginKey, Origin],
        component: int,
    ) -> list[Move]:
        members: list[Move] = []
        queue = list(start)
        seen: set[OriginKey] = set()
        while queue:
            key = queue.pop()
            if key in seen or key in self.moves:
                continue
            seen.add(key)
            origin = origins.get(key)
            if origin is None:
                continue
            move = Move(origin, self._rule(origin), component)
            self.moves[key] = move
            members.append(move)
            for meeting in index.get(key, ()):
                move.meetings.append(meeting)
                move.evidence.extend(_origins_at(meeting, Place.DEVICE))
                for other in _followers(meeting, key):
                    other_key = origin_key(other)
                    if other_key not in seen:
                        queue.append(other_key)
        evidence = [o for move in members for o in move.evidence]
        for move in members:
            move.evidence = list(dict.fromkeys(evidence))
        return members

    def _report_unplaced(self, meeting: Meeting, component: int, members: list[Move]) -> None:
        for move in members:
            move.fixable = False
            move.reason = "another value it meets is on the CPU for a reason devfix cannot change"

    def _decide(self, members: list[Move]) -> None:
        """A component is fixed whole or not at all."""
        problems = []
        for move in members:
            reason = self._blocker(move)
            if reason:
                problems.append((move, reason))
        if not problems:
            return
        first = problems[0][1]
        for move in members:
            own = next((reason for m, reason in problems if m is move), None)
            move.fixable = False
            move.reason = move.reason or own or f"it goes together with a value devfix cannot move ({first})"

    def _blocker(self, move: Move) -> str:
        origin = move.origin
        if move.rule == "":
            return _UNFIXABLE.get(origin.kind, "devfix cannot tell where this value comes from")
        uses = self.host_uses.get(origin_key(origin))
        if uses:
            detail = uses[0].detail or "host code"
            return f"it is also used by {detail}, which needs it on the CPU; move it by hand and keep a CPU copy"
        if not move.evidence:
            return "what it meets is on the device in a way devfix cannot name"
        if origin.kind in ("host", "factory") and origin_key(origin) in self.dataset_sources:
            # moved where it is made, the dataset would hold device tensors: a pinned loader
            # cannot pin them, worker processes cannot touch CUDA (DEV006)
            return "it also fills a DataLoader's dataset, which must stay on the CPU; move it where it meets the device"
        return ""

    def _rule(self, origin: Origin) -> str:
        kind = origin.kind
        if kind == "construct":
            return "DEV013" if self._in_plain_container(origin.node) else "DEV003"
        if kind in ("batch", "slice"):
            return "DEV004"
        if kind == "host":
            if self._module_world(origin.node):
                return "DEV007"
            return "DEV004" if origin.loop is not None else "DEV008"
        if kind == "factory":
            return "DEV007" if self._module_world(origin.node) else "DEV008"
        if kind == "attribute":
            return "DEV012"
        return ""

    def _module_world(self, node: cst.CSTNode) -> bool:
        function = self.tree.enclosing(node, cst.FunctionDef)
        info = self.program.functions.get(id(function)) if function is not None else None
        return info is not None and info.world == "module"

    def _in_plain_container(self, node: cst.CSTNode) -> bool:
        """A layer built inside a plain list/dict (or comprehension) assigned to `self.x`."""
        for ancestor in self.tree.ancestors(node):
            if isinstance(ancestor, (cst.List, cst.Dict, cst.ListComp, cst.DictComp)):
                return self._module_world(node)
            if isinstance(ancestor, (cst.Call, cst.BaseStatement)):
                if isinstance(ancestor, cst.Call) and ancestor.func is not None and node is not ancestor:
                    if not self.tree.is_inside(node, ancestor.func):
                        return False
                if isinstance(ancestor, cst.BaseStatement):
                    return False
        return False


_UNFIXABLE = {
    "cpu": "it is moved to the CPU on purpose (`.cpu()`)",
    "load": "it comes from a checkpoint loaded on the CPU",
    "move": "it is moved to the CPU on purpose",
    "module": "it is part of a module",
    "cuda-type": "it is built with a CUDA tensor type",
}


def _stays_in_a_buffer(tree: Tree, meeting: Meeting, index: dict[OriginKey, list[Meeting]]) -> bool:
    """`losses[i] = nll` into `losses = torch.zeros(n)` in a module's method that does not return
    `losses`, and the buffer meets nothing else that may be on the device: a plain index copies
    the device value into the CPU buffer, which is legal, and what the method does with the
    buffer after (`losses.mean()`, `.detach().numpy()`) stays on the CPU. Returned by `forward`
    (`return outputs` of a decoder), it meets the device in the caller; handed to a loss with
    the batch (`criterion(outputs, target_batch)`), in the method. Returned by another method
    (TextGAN's `sample()`, whose callers join the samples with CPU data), it is the caller's."""
    if meeting.kind != "store" or meeting.detail != "plain":
        return False
    container = meeting.operands[0][0]
    function = tree.enclosing(meeting.node, cst.FunctionDef)
    if not isinstance(container, cst.Name) or not isinstance(function, cst.FunctionDef):
        return False
    for origin in meeting.operands[0][1].origins:
        for other in index.get(origin_key(origin), ()):
            if other.kind == "store" and other.detail == "plain":
                continue  # another branch's `outputs[t] = decoder_output`
            if any(value.place is not Place.CPU for _, value in other.operands):
                return False
    if function.name.value not in _MODEL_CALLS:
        return True  # `sample()` of a text GAN fills a CPU buffer and returns it on the CPU on purpose
    return not tree.returns_a_name(function, {container.value})  # `return outputs`, `return outputs[:, 1:], hidden`


# The methods whose results are the model's output (`model(x)`): what they return meets the
# batch's targets. What another method returns (`sample()`, `generate()`) is for its caller to
# place: a buffer it returns on the CPU is no proven meeting.
_MODEL_CALLS = frozenset({"forward", "__call__"})


def _moved_by_the_next_statement(tree: Tree, built: cst.CSTNode) -> bool:
    """`model.fc = nn.Linear(...)` then `model.fc = model.fc.cuda()` (a fine-tuning script's
    new head; or `... if use_cuda else model.fc`), or `self.embed = nn.Embedding(...)` then `self.embed.to(old.weight.device)`: the
    module built is moved, in place, by a later statement of the same block, to where the
    program chose; wherever the flow meets it later, the program has placed it. The move may
    be of the object holding it (`model.module.Prediction = nn.Linear(...)`, its weights
    initialised in a loop, then `model = model.to(device)`: EasyOCR's fine-tuning), as long as
    nothing between calls the module or its holder."""
    statement = tree.statement_of(built)
    assigned = _only_small(statement)
    if not (isinstance(assigned, cst.Assign) and assigned.value is built and len(assigned.targets) == 1):
        return False
    target = assigned.targets[0].target
    holders = _holders(target)
    block = list(tree.block_of(statement))  # type: ignore[arg-type]  # a statement line here
    start = block.index(statement) + 1 if statement in block else len(block)
    for following in block[start:]:
        move = _only_small(following)
        if isinstance(move, cst.Assign) and len(move.targets) == 1:
            call: cst.BaseExpression | None = move.value
            if not any(move.targets[0].target.deep_equals(holder) for holder in holders):
                call = None
        elif isinstance(move, cst.Expr):
            call = move.value
        else:
            call = None
        if isinstance(call, cst.IfExp):  # `model.fc = model.fc.cuda() if use_cuda else model.fc`
            call = call.body
        func = call.func if isinstance(call, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda"):
            if any(func.value.deep_equals(holder) for holder in holders):
                return True
        if _calls_any(following, holders):
            return False  # used before it is moved
    return False


def _holders(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`model.module.Prediction`, `model.module`, `model`: the target and what holds it."""
    found = [target]
    while isinstance(target, cst.Attribute):
        target = target.value
        found.append(target)
    return found


def _calls_any(statement: cst.CSTNode, holders: list[cst.BaseExpression]) -> bool:
    """The statement calls the module or what holds it (`model(x)`), or hands it to a call."""

    class Finder(cst.CSTVisitor):
        found = False

        def visit_Call(self, node: cst.Call) -> None:
            parts = [node.func, *(arg.value for arg in node.args)]
            if any(part.deep_equals(holder) for part in parts for holder in holders):
                self.found = True

    finder = Finder()
    statement.visit(finder)
    return finder.found


def _only_small(statement: cst.CSTNode | None) -> cst.BaseSmallStatement | None:
    """The one small statement of a statement line (`x = y`), else None."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def _followers(meeting: Meeting, moved: OriginKey) -> list[Origin]:
    """The CPU origins of `meeting` that must go to the device with the moved one. A CPU index
    into a device tensor is allowed (`labels[train_mask]` once `labels` is moved), so a moved
    base takes no index along; a moved index takes its CPU base."""
    if meeting.kind == "index" and meeting.detail == "subscript":
        (_, base), (_, _index) = meeting.operands[:2]
        if any(origin_key(origin) == moved for origin in base.origins) and base.place is Place.CPU:
            return [origin for origin in base.origins if origin_key(origin) != moved]
    return _origins_at(meeting, Place.CPU)


def _origins_at(meeting: Meeting, place: Place) -> list[Origin]:
    """Where the meeting's operands (and called module) that live at `place` got there."""
    found: list[Origin] = []
    for _, value in meeting.operands:
        if takes_part(value) and value.place is place:
            found.extend(value.origins)
    module = meeting.module
    if module is not None and module.place is place and not module.neutral:
        found.extend(module.origins)
    return found


def _cpu_without_origin(meeting: Meeting) -> bool:
    if not meeting.conflict():
        return False
    for _, value in meeting.operands:
        if takes_part(value) and value.place is Place.CPU and not value.origins:
            return True
    module = meeting.module
    return module is not None and module.place is Place.CPU and not module.neutral and not module.origins


def _dataset_sources(program: Program) -> set[OriginKey]:
    """The origins of the tensors a loader of the file reads (`TensorDataset(X[idx], y)`)."""
    found: set[OriginKey] = set()
    for info in program.loaders.values():
        stack = [info.dataset]
        seen = 0
        while stack and seen < 64:
            value = stack.pop()
            seen += 1
            if value is None:
                continue
            found.update(origin_key(origin) for origin in value.origins)
            stack.extend(value.items or ())
            stack.extend(item for _, item in value.keys or ())
            if value.element is not None and value.element is not value:
                stack.append(value.element)
    return found

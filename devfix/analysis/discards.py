"""Which discarded moves DEV011 may assign (`x.cuda()` alone on a line is a no-op).

The flow first takes every such statement as the assignment its author meant. One is a bug,
and the assignment its fix, only where the moved copy then meets values on the device (a
moved model, the device outputs of one) and nothing on the CPU, or is returned to callers. A tensor that then meets only
what devfix cannot place (a model a test's caller hands in) or a CPU model is left as written:
a unit test that builds its model on the CPU works only because the move is discarded.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.values import Place


def unneeded_discards(program: Program) -> frozenset[int]:
    """The ids of the discarded-move statements whose moved copy is not needed."""
    return frozenset(id(statement) for statement in program.discarded_moves if not _copy_is_needed(program, statement))


def _copy_is_needed(program: Program, statement: cst.Expr) -> bool:
    call = statement.value
    # returned to the callers (`mask.to(device); return mask` in a helper given the device):
    # they asked for it on the device; their own meetings are theirs to check
    needed = _returned(program, statement)
    for meeting in program.meetings.values():
        if meeting.kind == "host":
            continue
        moved = [value for _, value in meeting.operands if any(o.node is call for o in value.origins)]
        if not moved:
            continue
        if meeting.conflict():
            return False
        others = [value for _, value in meeting.operands if not any(o.node is call for o in value.origins)]
        module = meeting.module
        if (module is not None and not module.neutral and module.place is Place.DEVICE) or any(
            value.place is Place.DEVICE for value in others
        ):
            needed = True
    return needed


def _returned(program: Program, statement: cst.Expr) -> bool:
    """The function around `x.to(device)` returns `x` itself (`return x`, `return x, y`)."""
    call = statement.value
    assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
    name = call.func.value.value
    function = program.owner_function(statement)
    if function is None:
        return False
    finder = _Returns(name)
    function.node.body.visit(finder)
    return finder.found


class _Returns(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.found = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's returns are its own

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        parts = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        if any(isinstance(part, cst.Name) and part.value == self.name for part in parts):
            self.found = True

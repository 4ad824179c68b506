"""Does a line run on a machine without a GPU?

The flow evaluates a program as it runs on a GPU machine and records, for every condition,
its truth there and why: an availability check (`torch.cuda.is_available()`), a user's
choice (`args.cuda`, `--no-cuda`), or a constant (`USE_CUDA = True`). On a CPU-only machine
the first two flip (no GPU; a user without one does not ask for CUDA) and constants stay.
DEV002 and DEV001 ask this before calling a hard-coded CUDA a crash.
"""

from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.tree import Tree


def cpu_truth(program: Program, test: cst.BaseExpression) -> Optional[bool]:
    value = program.values.get(id(test))
    if value is None or value.truth is None:
        return None
    if value.flag in ("available", "choice"):
        return not value.truth
    if value.flag in ("constant", "hard"):
        return value.truth
    return None


def runs_without_gpu(tree: Tree, program: Program, node: cst.CSTNode, _seen: Optional[Set[int]] = None) -> bool:
    """Whether `node` can run on a CPU-only machine (as far as the file shows)."""
    seen = _seen if _seen is not None else set()
    child: cst.CSTNode = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and child is not ancestor.test:
            truth = cpu_truth(program, ancestor.test)
            in_body = child is ancestor.body
            if truth is False and in_body or truth is True and not in_body and not isinstance(ancestor, cst.While):
                return False
        elif isinstance(ancestor, (cst.Try, cst.TryStar)) and child is ancestor.body and ancestor.handlers:
            return False  # the author catches what fails without a GPU
        elif isinstance(ancestor, cst.FunctionDef):
            if id(ancestor) in seen:
                return True
            seen.add(id(ancestor))
            sites = program.call_sites.get(id(ancestor), [])
            if sites:
                return any(runs_without_gpu(tree, program, site, seen) for site in sites)
            return True
        child = ancestor
    return True

"""Edits as data, and the one transformer that applies them.

Rules never transform the tree themselves: they return edits that name original nodes.
The engine applies every edit of a file in one pass and one code generation, so positions
always refer to the original file. Edits compose:

- an edit on a node that another edit's replacement still contains (`Net()` inside the
  `Net().to(device)` that replaces it) is applied inside that replacement;
- an edit inside a statement another edit removes is *subsumed*: the code it fixes is gone;
- two edits that really compete (the same node replaced twice, a replacement that drops the
  other's node) conflict: the first one wins and the other is not applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Union

import libcst as cst
from libcst.helpers import ensure_type


@dataclass(frozen=True)
class Replace:
    """Replace `node` (any node) with `new`."""

    node: cst.CSTNode
    new: cst.CSTNode


@dataclass(frozen=True)
class InsertBefore:
    """Insert statements before the statement `node` (same block, same indentation)."""

    node: cst.BaseStatement
    statements: Sequence[cst.BaseStatement]


@dataclass(frozen=True)
class InsertAfter:
    node: cst.BaseStatement
    statements: Sequence[cst.BaseStatement]


@dataclass(frozen=True)
class Remove:
    """Remove the statement `node`."""

    node: cst.BaseStatement


@dataclass(frozen=True)
class ReplaceStatement:
    """Replace the statement `node` with zero or more statements."""

    node: cst.BaseStatement
    statements: Sequence[cst.BaseStatement]


Edit = Union[Replace, InsertBefore, InsertAfter, Remove, ReplaceStatement]
Ancestors = Callable[[cst.CSTNode], Iterator[cst.CSTNode]]  # a node's ancestors, innermost first


@dataclass
class _Plan:
    replace: dict[int, cst.CSTNode] = field(default_factory=dict)
    replace_with_many: dict[int, Sequence[cst.BaseStatement]] = field(default_factory=dict)
    before: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    after: dict[int, list[cst.BaseStatement]] = field(default_factory=dict)
    nested: set[int] = field(default_factory=set)  # replacements that contain other edits' nodes

    def without(self, key: int) -> _Plan:
        """The plan for visiting a replacement: everything but the replacement itself."""
        replace = {k: v for k, v in self.replace.items() if k != key}
        return _Plan(replace, self.replace_with_many, self.before, self.after, self.nested - {key})


def is_rewrite(edit: Edit) -> bool:
    """Edits that rewrite their node's subtree (as opposed to inserting next to it)."""
    return isinstance(edit, (Replace, Remove, ReplaceStatement))


class _Applier(cst.CSTTransformer):
    def __init__(self, plan: _Plan, only: set[int] | None = None) -> None:
        super().__init__()
        self.plan = plan
        # With `only` (the ids of the edited nodes and their ancestors), the other subtrees are
        # left as they are, not rebuilt: LibCST's transformer costs about a parse per file.
        self.only = only
        self.blocks: list[cst.CSTNode] = []  # enclosing Module / IndentedBlock, innermost last
        # Comment lines of removed statements, waiting for the next statement of their block.
        self.orphans: dict[int, list[cst.EmptyLine]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Module, cst.IndentedBlock)):
            self.blocks.append(node)
        # a node not visited still has its `on_leave`: a statement after a removed one adopts its comments
        return self.only is None or id(node) in self.only

    def on_leave(  # type: ignore[override]  # a replacement need not be of its original's type
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        if isinstance(original_node, (cst.Module, cst.IndentedBlock)):
            self.blocks.pop()
            return self._settle_orphans(original_node, updated_node)
        key = id(original_node)
        plan = self.plan
        result = plan.replace.get(key, updated_node)
        if key in plan.replace and key in plan.nested:
            # the replacement holds original nodes that other edits change: apply them there
            visited = result.visit(_Applier(plan.without(key)))
            if not isinstance(visited, cst.CSTNode):
                return visited  # the replacement itself removed or split by the edits inside it
            result = visited
        many: list[cst.CSTNode]
        if key in plan.replace_with_many:
            many = list(plan.replace_with_many[key])
        else:
            many = [result]
        before = plan.before.get(key)
        after = plan.after.get(key)
        if before or after or key in plan.replace_with_many:
            many = [*(before or ()), *many, *(after or ())]
            if not many:
                self._keep_comments(original_node)
                return cst.RemovalSentinel.REMOVE
            return self._adopt_orphans(original_node, cst.FlattenSentinel(many))
        return self._adopt_orphans(original_node, result)

    def _keep_comments(self, removed: cst.CSTNode) -> None:
        comments = [line for line in getattr(removed, "leading_lines", ()) if line.comment is not None]
        if comments and self.blocks:
            self.orphans.setdefault(id(self.blocks[-1]), []).extend(comments)

    def _adopt_orphans(
        self, original: cst.CSTNode, result: cst.CSTNode | cst.FlattenSentinel[cst.CSTNode]
    ) -> cst.CSTNode | cst.FlattenSentinel[cst.CSTNode]:
        """Give waiting comment lines to the first statement that follows them, above its own
        leading lines: the order the lines had in the file (in a notebook's program, a cell's
        marker comment must stay above the lines of its cell)."""
        if not isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) or not self.blocks:
            return result
        comments = self.orphans.pop(id(self.blocks[-1]), None)
        if not comments:
            return result
        if isinstance(result, cst.FlattenSentinel):
            first, *rest = list(result.nodes)
            return cst.FlattenSentinel([_below(comments, first), *rest])
        return _below(comments, result)

    def _settle_orphans(self, original: cst.Module | cst.IndentedBlock, updated: cst.CSTNode) -> cst.CSTNode:
        """Comments of a block's removed last statement go to the block's footer."""
        comments = self.orphans.pop(id(original), None)
        if not comments:
            return updated
        block = ensure_type(updated, type(original))  # the block, its statements changed
        return block.with_changes(footer=[*comments, *block.footer])


def _below(comments: Sequence[cst.EmptyLine], statement: cst.CSTNode) -> cst.CSTNode:
    """`statement` with `comments` above its own leading lines."""
    if not isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        raise TypeError(f"expected a statement, got {type(statement).__name__}")
    return statement.with_changes(leading_lines=[*comments, *statement.leading_lines])


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether `node` (an original node) is part of `tree` (a replacement built from originals)."""
    stack = [tree]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(current.children)
    return False


def apply_edits(
    module: cst.Module, edits: Iterable[Edit], ancestors: Ancestors
) -> tuple[cst.Module, set[int], set[int]]:
    """Apply `edits` to `module`: the new module, the ids of the edits applied, and the ids of
    the edits subsumed (their node is inside a statement another edit removes).

    `ancestors(node)` yields the node's ancestors, innermost first (the analysis knows every
    node's parent, so this costs no extra walk). Conflicts are found through an index of the
    rewrites taken so far by node and by ancestor, so each edit costs the depth of its node,
    not a comparison with every other edit of the file.
    """
    plan = _Plan()
    rewrites = _Rewrites(ancestors)
    applied: set[int] = set()
    subsumed: set[int] = set()
    edited: set[int] = set()  # the nodes of the edits applied and their ancestors: all the transformer visits
    # Removals first: an edit inside a removed statement is then subsumed, whichever rule made it.
    for edit in sorted(edits, key=lambda e: not _removes(e)):
        node = edit.node
        outcome = _fit(edit, rewrites)
        if outcome[0] == "subsumed":
            subsumed.add(id(edit))
            continue
        if outcome[0] == "conflict":
            continue
        plan.nested.update(outcome[1])
        key = id(node)
        if isinstance(edit, Replace):
            plan.replace[key] = edit.new
        elif isinstance(edit, Remove):
            plan.replace_with_many[key] = ()
        elif isinstance(edit, ReplaceStatement):
            plan.replace_with_many[key] = edit.statements
        elif isinstance(edit, InsertBefore):
            _add_new(plan.before.setdefault(key, []), edit.statements)
        elif isinstance(edit, InsertAfter):
            _add_new(plan.after.setdefault(key, []), edit.statements)
        if is_rewrite(edit):
            rewrites.add(edit)
        applied.add(id(edit))
        edited.add(key)
        edited.update(id(ancestor) for ancestor in ancestors(node))
    if not applied:
        return module, applied, subsumed
    return module.visit(_Applier(plan, edited)), applied, subsumed


def _add_new(inserted: list[cst.BaseStatement], statements: Sequence[cst.BaseStatement]) -> None:
    """Each statement once at one place: two fixes that each need `import torch` after the
    imports (two functions' device declarations) insert it once."""
    inserted.extend(s for s in statements if not any(s.deep_equals(other) for other in inserted))


class _Rewrites:
    """The rewrites taken so far, in order, indexed by their node and by each of its ancestors."""

    def __init__(self, ancestors: Ancestors) -> None:
        self.ancestors = ancestors
        self.taken: list[Edit] = []
        self.at: dict[int, list[int]] = {}  # id(node) -> indices of the rewrites of that node
        self.below: dict[int, list[int]] = {}  # id(node) -> indices of the rewrites inside it

    def add(self, edit: Edit) -> None:
        index = len(self.taken)
        self.taken.append(edit)
        self.at.setdefault(id(edit.node), []).append(index)
        for ancestor in self.ancestors(edit.node):
            self.below.setdefault(id(ancestor), []).append(index)


def _removes(edit: Edit) -> bool:
    return isinstance(edit, Remove) or (isinstance(edit, ReplaceStatement) and not edit.statements)


def _fit(edit: Edit, rewrites: _Rewrites) -> tuple[str, set[int]]:
    """How `edit` fits with the rewrites taken so far: ("ok" | "subsumed" | "conflict", the ids
    of the replaced nodes whose replacement must then be visited for nested edits). Only the
    rewrites of the node, of its ancestors and of its descendants can touch it; they are
    judged in the order they were taken."""
    node = edit.node
    nested: set[int] = set()
    above = {id(ancestor) for ancestor in rewrites.ancestors(node)}
    inside = set(rewrites.below.get(id(node), ()))
    related = set(rewrites.at.get(id(node), ())) | inside
    for key in above:
        related.update(rewrites.at.get(key, ()))
    for index in sorted(related):
        other = rewrites.taken[index]
        outer = other.node
        if node is outer:
            return "conflict", set()
        if id(outer) in above:
            if _removes(other):
                return "subsumed", set()
            if isinstance(other, Replace) and _contains(other.new, node):
                nested.add(id(outer))  # applied inside the other's replacement
                continue
            return "conflict", set()
        if index in inside and is_rewrite(edit):
            if isinstance(edit, Replace) and _contains(edit.new, outer):
                nested.add(id(node))  # the earlier edit applies inside this replacement
                continue
            return "conflict", set()
    return "ok", nested

"""Scopes and bindings, and the name resolver built on them.

LibCST's ScopeProvider + QualifiedNameProvider cost about 8x a parse on real code, mostly
because they track every access of every name. devfix only needs one question answered —
"what does this dotted name refer to, through imports?" — so the analysis pass records
bindings per scope (imports, assignments, parameters, defs) and resolution is a dictionary
walk up the scope chain, done only for the few expressions a rule asks about.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

import libcst as cst

# The methods that put a tensor or module on a device (what "moved" means everywhere).
MOVE_METHODS = frozenset({"to", "cuda"})

ScopeNode = Union[cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda]


@dataclass(eq=False)
class Binding:
    """One place where a name is bound in a scope."""

    name: str
    kind: str  # "import" | "assign" | "param" | "def" | "class" | "loop" | "with" | "other"
    node: cst.CSTNode  # the statement (or Param) that binds it
    order: int  # preorder index of `node`: textual order within the file
    value: cst.BaseExpression | None = None  # right-hand side of a plain assignment
    qualname: str | None = None  # for imports: the dotted name it stands for


@dataclass(eq=False)
class Scope:
    node: ScopeNode
    kind: str  # "module" | "function" | "class" | "lambda"
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)

    def bind(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    def visible_parent(self) -> Scope | None:
        """The next scope a name lookup continues in (class bodies are skipped)."""
        scope = self.parent
        while scope is not None and scope.kind == "class":
            scope = scope.parent
        return scope

    def lookup(self, name: str) -> list[Binding] | None:
        """Bindings of `name` in the nearest scope that binds it, Python's LEGB order."""
        scope: Scope | None = self
        while scope is not None:
            found = scope.bindings.get(name)
            if found:
                return found
            scope = scope.visible_parent()
        return None

    @property
    def function(self) -> cst.FunctionDef | None:
        return self.node if isinstance(self.node, cst.FunctionDef) else None

    @property
    def enclosing_class(self) -> Scope | None:
        """For a method's scope, the scope of the class it is defined in."""
        if self.kind == "function" and self.parent is not None and self.parent.kind == "class":
            return self.parent
        return None


def dotted_parts(expr: cst.BaseExpression) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; anything that is not a plain dotted name -> None."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    parts.reverse()
    return parts


def dotted_name(expr: cst.BaseExpression) -> str | None:
    parts = dotted_parts(expr)
    return ".".join(parts) if parts else None


def resolve(expr: cst.BaseExpression, scope: Scope, _depth: int = 0) -> str | None:
    """The fully qualified name `expr` refers to through imports, or None.

    `nn.Linear` with `from torch import nn` -> "torch.nn.Linear"; `T.zeros` with
    `import torch as T` -> "torch.zeros". A name rebound by an assignment resolves only when
    the assignment is itself an alias of an imported name (`nn = torch.nn`).
    """
    parts = dotted_parts(expr)
    if not parts or _depth > 8:
        return None
    bindings = scope.lookup(parts[0])
    if not bindings:
        return None
    base = _binding_qualname(bindings, scope, _depth)
    if base is None:
        return None
    return ".".join([base, *parts[1:]])


def _binding_qualname(bindings: list[Binding], scope: Scope, depth: int) -> str | None:
    names = set()
    for binding in bindings:
        if binding.kind == "import":
            names.add(binding.qualname)
        elif binding.kind == "assign" and binding.value is not None and dotted_parts(binding.value):
            names.add(resolve(binding.value, scope, depth + 1))
        else:
            return None
    # A name bound to two different things (conditional imports of different modules) is
    # ambiguous; the same import repeated (try/except fallbacks of one module) is not.
    if len(names) == 1:
        return names.pop()
    return None


def iter_names(node: cst.CSTNode) -> Iterator[cst.Name]:
    """Name nodes that read a variable: not attribute names, keywords, or nested defs."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            yield current
            continue
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and current is not node:
            continue
        if isinstance(current, cst.Attribute):
            stack.append(current.value)
            continue
        if isinstance(current, cst.Arg):
            stack.append(current.value)
            continue
        stack.extend(reversed(current.children))


def chain_moves(expr: cst.BaseExpression) -> bool:
    """Whether a method chain contains `.to(...)`/`.cuda()`."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if expr.func.attr.value in MOVE_METHODS or expr.func.attr.value == "to_empty":
            return True
        expr = expr.func.value
    return False

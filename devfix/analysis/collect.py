"""The one pass over a module that every rule reads from.

It records, in a single visit: each node's parent and preorder index (so rules can find the
enclosing statement, scope or loop, and compare textual order, without LibCST's
ParentNodeProvider), the scopes and their bindings (for the resolver in `scopes.py`), and
the nodes rules look at (calls, assignments, loops, ifs, classes, functions). Everything
else in `FileFacts` is derived from these lists on demand and cached.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any, Callable, TypeVar

import libcst as cst

from devfix.analysis.scopes import Binding, Scope, ScopeNode, dotted_name

_Node = TypeVar("_Node", bound=cst.CSTNode)


class Collected:
    """Raw facts of one pass; `FileFacts` wraps it with derived, cached views."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.parent: dict[int, cst.CSTNode | None] = {}
        self.order: dict[int, int] = {}
        self.end_order: dict[int, int] = {}  # scope owners: preorder index of their last descendant
        self.scopes: dict[int, Scope] = {}
        self.module_scope = Scope(module, "module", None)
        self.scopes[id(module)] = self.module_scope
        self.calls: list[cst.Call] = []
        self.assigns: list[cst.Assign] = []
        self.other_assigns: list[cst.CSTNode] = []  # AugAssign and AnnAssign
        self.name_attributes: list[cst.Attribute] = []  # `x.attr` where x is a plain name
        self.expr_statements: list[cst.Expr] = []
        self.for_loops: list[cst.For] = []
        self.while_loops: list[cst.While] = []
        self.ifs: list[cst.If] = []
        self.classes: list[cst.ClassDef] = []
        self.functions: list[cst.FunctionDef] = []
        self.subscripts: list[cst.Subscript] = []
        self.returns: list[cst.CSTNode] = []  # Return and Yield nodes
        self.globals: set[str] = set()  # names a function declares `global` (it may bind them)
        self.star_imports: list[cst.ImportFrom] = []
        self.double_quotes = 0
        self.single_quotes = 0
        self._orders: dict[int, list[int]] = {}  # id(one of the lists above) -> its members' preorder indices

    def within(self, nodes: Sequence[_Node], owner: cst.CSTNode) -> Sequence[_Node]:
        """The members of `nodes` (one of the lists above, filled in preorder) inside `owner`
        (a scope owner: its preorder range is known), found by bisection: asking it for
        every function of a file costs the file once, not once per function."""
        orders = self._orders.get(id(nodes))
        if orders is None or len(orders) != len(nodes):
            orders = self._orders[id(nodes)] = [self.order[id(node)] for node in nodes]
        start, end = self.order.get(id(owner), -1), self.end_order.get(id(owner), -1)
        return nodes[bisect_right(orders, start) : bisect_right(orders, end)]


class _Probe(cst.CSTVisitor):
    """Records the attributes LibCST visits, in its order, without going below them."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields.append(attribute)


_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}
_ABSENT = cst.MaybeSentinel.DEFAULT


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    """The attributes of `node`'s type that hold its children, in the order LibCST's visitors
    visit them (lexical order, which is not always the order of the dataclass's fields).
    Learnt once per type from LibCST itself: its `_visit_and_replace_children` visits the
    same attributes in the same order whatever their values, except the `format_spec` of an
    f-string's (or t-string's) `{...}`, visited last and only when there is one."""
    probe = _Probe()
    node._visit_and_replace_children(probe)
    if hasattr(node, "format_spec") and "format_spec" not in probe.fields:
        probe.fields.append("format_spec")
    fields = _FIELDS[type(node)] = tuple(dict.fromkeys(probe.fields))
    return fields


class _Collector:
    """Walks the tree itself rather than through `CSTNode.visit`: LibCST's visitor calls two
    hooks per attribute and rebuilds (and validates) every node on the way up, which cost
    more than the native parse; this walk reads the same children in the same order."""

    def __init__(self, data: Collected) -> None:
        self.data = data
        self.scope_stack: list[Scope] = [data.module_scope]
        self.counter = 0
        # by the node's exact type: each handler takes nodes of its own type
        self.handlers: dict[type[cst.CSTNode], Callable[[Any], None]] = {
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.FunctionDef: self._function,
            cst.ClassDef: self._class,
            cst.Lambda: self._lambda,
            cst.For: self._for,
            cst.While: self._while,
            cst.If: self._if,
            cst.With: self._with,
            cst.Call: self._call,
            cst.Expr: self._expr,
            cst.Subscript: self._subscript,
            cst.Attribute: self._attribute,
            cst.Return: self._return,
            cst.Yield: self._return,
            cst.SimpleString: self._string,
            cst.NamedExpr: self._walrus,
            cst.ExceptHandler: self._except,
            cst.Global: self._global,
        }
        self.scope_owners = (cst.FunctionDef, cst.ClassDef, cst.Lambda)

    # -- generic bookkeeping -------------------------------------------------------------
    def walk(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        """Preorder: each node's parent and index, its handler, then its children."""
        data = self.data
        key = id(node)
        data.parent[key] = parent
        data.order[key] = self.counter
        self.counter += 1
        kind = type(node)
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(node)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _fields(node)
        walk = self.walk
        for name in fields:
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                for child in value:
                    walk(child, node)
            elif value is not None and value is not _ABSENT:  # LibCST visits nothing else
                walk(value, node)
        if handler is not None and isinstance(node, self.scope_owners):
            self.scope_stack.pop()
            data.end_order[key] = self.counter - 1

    # -- bindings ------------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scope_stack[-1]

    def _bind(
        self,
        name: str,
        kind: str,
        node: cst.CSTNode,
        *,
        value: cst.BaseExpression | None = None,
        qualname: str | None = None,
    ) -> None:
        order = self.data.order.get(id(node), self.counter)
        self.scope.bind(Binding(name, kind, node, order, value=value, qualname=qualname))

    def _bind_target(self, target: cst.BaseExpression, kind: str, node: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, kind, node)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value, kind, node)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, kind, node)

    def _push_scope(self, node: ScopeNode, kind: str) -> Scope:
        scope = Scope(node, kind, self.scope)
        self.data.scopes[id(node)] = scope
        self.scope_stack.append(scope)
        return scope

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, "import", node, qualname=full)
            else:
                top = full.split(".")[0]
                self._bind(top, "import", node, qualname=top)

    def _global(self, node: cst.Global) -> None:
        self.data.globals.update(item.name.value for item in node.names)

    def _import_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            self.data.star_imports.append(node)
            return
        module = dotted_name(node.module) if node.module is not None else None
        relative = bool(node.relative)
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            if relative or module is None:
                self._bind(local, "other", node)  # a project-local module: shadows, never torch
            else:
                self._bind(local, "import", node, qualname=f"{module}.{name}")

    def _assign(self, node: cst.Assign) -> None:
        self.data.assigns.append(node)
        single = len(node.targets) == 1
        for target in node.targets:
            if single and isinstance(target.target, cst.Name):
                self._bind(target.target.value, "assign", node, value=node.value)
            else:
                self._bind_target(target.target, "other", node)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        self.data.other_assigns.append(node)
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, "assign" if node.value else "other", node, value=node.value)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self.data.other_assigns.append(node)
        self._bind_target(node.target, "other", node)

    def _walrus(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, "other", node)

    def _except(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name, "other", node)

    def _function(self, node: cst.FunctionDef) -> None:
        self.data.functions.append(node)
        self._bind(node.name.value, "def", node)
        self._push_scope(node, "function")
        self._bind_params(node.params)

    def _lambda(self, node: cst.Lambda) -> None:
        self._push_scope(node, "lambda")
        self._bind_params(node.params)

    def _bind_params(self, params: cst.Parameters) -> None:
        everything = [*params.posonly_params, *params.params, *params.kwonly_params]
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                everything.append(extra)
        for param in everything:
            self._bind(param.name.value, "param", param)

    def _class(self, node: cst.ClassDef) -> None:
        self.data.classes.append(node)
        self._bind(node.name.value, "class", node)
        self._push_scope(node, "class")

    def _for(self, node: cst.For) -> None:
        self.data.for_loops.append(node)
        self._bind_target(node.target, "loop", node)

    def _while(self, node: cst.While) -> None:
        self.data.while_loops.append(node)

    def _if(self, node: cst.If) -> None:
        self.data.ifs.append(node)

    def _with(self, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._bind_target(item.asname.name, "with", node)

    def _call(self, node: cst.Call) -> None:
        self.data.calls.append(node)

    def _expr(self, node: cst.Expr) -> None:
        self.data.expr_statements.append(node)

    def _return(self, node: cst.CSTNode) -> None:
        self.data.returns.append(node)

    def _attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):
            self.data.name_attributes.append(node)

    def _subscript(self, node: cst.Subscript) -> None:
        self.data.subscripts.append(node)

    def _string(self, node: cst.SimpleString) -> None:
        quote = node.quote
        if quote.startswith('"'):
            self.data.double_quotes += 1
        else:
            self.data.single_quotes += 1


def collect(module: cst.Module) -> Collected:
    data = Collected(module)
    _Collector(data).walk(module, None)
    return data

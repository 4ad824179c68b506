"""Navigation over the one collected pass: parents, statements, scopes, order, positions.

The bottom layer of the analysis (with `collect.py` and `scopes.py`): it knows syntax only,
nothing about torch. Positions are computed once per file, and only for files that have
something to report.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TypeVar

import libcst as cst

from devfix.analysis.cells import CELL_MARK
from devfix.analysis.collect import Collected, collect
from devfix.analysis.layout import Layout, Original
from devfix.analysis.scopes import Binding, Scope, dotted_name, resolve

_N = TypeVar("_N", bound=cst.CSTNode)


def is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def is_pass(statement: cst.CSTNode) -> bool:
    """A bare `pass` line: in a notebook's program, where an IPython line stood (`%matplotlib
    inline` among the imports); it does nothing, so it does not end a block of imports."""
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, cst.Pass) for s in statement.body)


def imports_torch(data: Collected) -> bool:
    """The file imports torch (or one of its modules) somewhere."""
    return any(
        b.kind == "import" and b.qualname and b.qualname.split(".")[0] == "torch"
        for scope in data.scopes.values()
        for bindings in scope.bindings.values()
        for b in bindings
    )


def displayed_by_their_cells(module: cst.Module) -> frozenset[int]:
    """In a notebook's program, the ids of the cells' last lines that are top-level expressions:
    IPython shows their value (`m.to(device)` ending a tutorial's cell is looked at, not lost).
    Empty for a script."""
    body = module.body
    if not body or not _opens_a_cell([*module.header, *body[0].leading_lines]):
        return frozenset()  # not a notebook
    return frozenset(
        id(line)
        for index, line in enumerate(body)
        if isinstance(line, cst.SimpleStatementLine)
        and isinstance(line.body[-1], cst.Expr)
        and (index + 1 == len(body) or _opens_a_cell(body[index + 1].leading_lines))
    )


def _opens_a_cell(lines: Iterable[cst.EmptyLine]) -> bool:
    return any(empty.comment is not None and empty.comment.value.startswith(CELL_MARK) for empty in lines)


def kept_parameters(init: cst.FunctionDef) -> dict[str, str]:
    """The attributes a constructor sets straight from its parameters, in its own body
    (`self.model = model`, `self.cuda = cuda`): attribute -> parameter."""
    positional = init.params.params
    if not positional:
        return {}
    self_name = positional[0].name.value
    params = {p.name.value for p in (*positional[1:], *init.params.kwonly_params)}
    found: dict[str, str] = {}
    for statement in init.body.body if isinstance(init.body, cst.IndentedBlock) else ():
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Attribute)
                and isinstance(small.targets[0].target.value, cst.Name)
                and small.targets[0].target.value.value == self_name
                and isinstance(small.value, cst.Name)
                and small.value.value in params
            ):
                found[small.targets[0].target.attr.value] = small.value.value
    return found


def defaults_to_a_constant(param: cst.Param) -> bool:
    """`no_log=False`, `temperature=1.0`, `mode="train"` (TextGAN's `forward_leakgan`): a
    parameter whose default is a number, a string or a bool is a flag, not a tensor with a
    `.device` to take (`device=no_log.device` raised AttributeError on every call)."""
    default = param.default
    if isinstance(default, cst.UnaryOperation):
        default = default.expression
    if isinstance(default, cst.Name):
        return default.value in ("True", "False")
    return isinstance(default, (cst.Integer, cst.Float, cst.BaseString))


def is_import(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
    if isinstance(statement, cst.Try):
        return all(is_import(s) for s in statement.body.body)
    return False


MODULE_GLOBALS = frozenset(
    {
        "__name__",
        "__file__",
        "__doc__",
        "__builtins__",
        "__spec__",
        "__loader__",
        "__package__",
        "__path__",
        "__annotations__",
        "__cached__",
        "get_ipython",
        "display",
    }
)  # a script exported from a notebook runs under IPython


def read_names(node: cst.CSTNode, *, deferred: bool = False) -> list[cst.Name]:
    """The plain `Name` nodes under `node`, attribute names and keywords left out (`pred.data`,
    `f(data=x)` name no `data`). Without `deferred`, only what evaluating it right away reads:
    not inside a lambda or a comprehension."""
    visitor = _Loads(deferred)
    node.visit(visitor)
    return visitor.names


class _Loads(cst.CSTVisitor):
    """read_names' walk."""

    def __init__(self, deferred: bool = False) -> None:
        self.names: list[cst.Name] = []
        self.deferred = deferred

    def visit_Name(self, node: cst.Name) -> None:
        self.names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self.deferred

    def visit_ListComp(self, node: cst.BaseComp) -> bool:
        return self.deferred

    visit_SetComp = visit_GeneratorExp = visit_DictComp = visit_ListComp


def first_failure(
    module: cst.Module, data: Collected, missing_modules: frozenset[str] = frozenset()
) -> cst.BaseStatement | None:
    """The first top-level statement that always raises: it imports a project module that does
    not exist (`missing_modules`, from project.py: ImportError), or it reads a name nothing has
    bound yet (a script exported from a notebook whose cells ran out of order: NameError).
    Nothing after it runs. NameError is not decided when a star import or `global` could bind
    anything."""
    return _first_raising(module.body, data, missing_modules)


def main_block_failure(
    module: cst.Module, data: Collected, missing_modules: frozenset[str] = frozenset()
) -> cst.BaseStatement | None:
    """`first_failure` within the `if __name__ == "__main__":` block: a self-test that builds a
    class the module no longer defines (Deeplab-Large-FOV's `FocalLoss(...)` in `lib/loss.py`)
    stops there, and the block's later lines never run."""
    for statement in module.body:
        if isinstance(statement, cst.If) and is_main_check(statement.test):
            if isinstance(statement.body, cst.IndentedBlock):
                return _first_raising(statement.body.body, data, missing_modules)
    return None


def _first_raising(
    statements: Sequence[cst.BaseStatement], data: Collected, missing_modules: frozenset[str]
) -> cst.BaseStatement | None:
    bindings = data.module_scope.bindings
    for statement in statements:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        order = data.order.get(id(statement), -1)
        for small in statement.body:
            if missing_modules and imports_module(small, missing_modules):
                return statement
            if data.star_imports or not isinstance(small, (cst.Expr, cst.Assign)):
                continue
            if any(_unbound(name.value, order, bindings, data) for name in read_names(small.value)):
                return statement
    return None


def imports_module(small: cst.BaseSmallStatement, missing_modules: frozenset[str]) -> bool:
    """The statement imports one of `missing_modules`: dotted names, a relative import's with
    its dots (`.model_utils` for `from .model_utils import x` and `from . import model_utils`)."""
    if isinstance(small, cst.ImportFrom) and small.relative:
        dots = "." * len(small.relative)
        if small.module is not None:
            return dots + (dotted_name(small.module) or "") in missing_modules
        aliases = small.names if not isinstance(small.names, cst.ImportStar) else ()
        return any(dots + (dotted_name(alias.name) or "") in missing_modules for alias in aliases)
    if isinstance(small, cst.ImportFrom) and small.module is not None:
        module = dotted_name(small.module)
        aliases = small.names if not isinstance(small.names, cst.ImportStar) else ()
        return module in missing_modules or any(
            f"{module}:{dotted_name(alias.name)}" in missing_modules for alias in aliases
        )
    if isinstance(small, cst.Import):
        return any(dotted_name(alias.name) in missing_modules for alias in small.names)
    return False


def reads_unbound_name(expressions: Iterable[cst.CSTNode], scope: Scope, data: Collected) -> bool:
    """Evaluating `expressions` in `scope` reads a name that nothing in the file binds, in that
    scope or any enclosing one (a variable whose definition was commented out): NameError on
    every machine. False when unsure (a star import or `global` could bind anything)."""
    if data.star_imports:
        return False
    for name in (name for expression in expressions for name in read_names(expression)):
        text = name.value
        if text in MODULE_GLOBALS or hasattr(builtins, text) or text in data.globals:
            continue
        if scope.lookup(text) is None:
            return True
    return False


def _unbound(name: str, order: int, bindings: Mapping[str, Sequence[Binding]], data: Collected) -> bool:
    if name in MODULE_GLOBALS or hasattr(builtins, name) or name in data.globals:
        return False
    return not any(binding.order < order for binding in bindings.get(name, ()))


class Tree:
    def __init__(self, module: cst.Module, data: Collected | None = None, original: Original | None = None) -> None:
        self.module = module
        self.data = data if data is not None else collect(module)
        self._layout = Layout(module, original)
        self._positions: dict[int, tuple[int, int]] = {}

    # -- ancestry ------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.data.parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def order(self, node: cst.CSTNode) -> int:
        return self.data.order.get(id(node), -1)

    def binds_on_the_way(self, binder: cst.CSTNode, node: cst.CSTNode, name: str) -> bool:
        """A binding of `name` made at `binder` is in place when `node` runs: it is not in one
        branch of an `if` that does not hold `node` while the other branch leaves the name
        alone (off-belief-learning's `if args.model: device = "cuda"`, then a load under `if
        args.belief_model:`)."""
        child = binder
        for ancestor in self.ancestors(binder):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
                return True
            if isinstance(ancestor, cst.If) and child is not ancestor.test and not self.is_inside(node, ancestor):
                other = ancestor.orelse if child is ancestor.body else ancestor.body
                bindings = self.function_scope_of(binder).bindings.get(name, ())
                if other is None or not any(self.is_inside(b.node, other) for b in bindings):
                    return False
            child = ancestor
        return True

    def is_inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        """By preorder range where the ancestor's range is known (scope owners), else by walking."""
        end = self.data.end_order.get(id(ancestor))
        if end is not None:
            return self.order(ancestor) < self.order(node) <= end
        return any(candidate is ancestor for candidate in self.ancestors(node))

    def returns_a_name(self, function: cst.FunctionDef, names: Collection[str]) -> bool:
        """A `return` of `function` reads one of `names` (`return outputs`, `return a, b`):
        what the function built under that name leaves it, for its caller to place."""
        for exit_node in self.data.returns:
            value = getattr(exit_node, "value", None)
            if value is not None and self.is_inside(exit_node, function):
                if any(name.value in names for name in read_names(value, deferred=True)):
                    return True
        return False

    def top_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The module-level statement that holds `node`."""
        child: cst.CSTNode = node
        for ancestor in self.ancestors(node):
            if ancestor is self.module:
                return child
            child = ancestor
        return None

    def in_main_block(self, node: cst.CSTNode) -> bool:
        """`node` is inside the module's `if __name__ == "__main__":` block: it runs only when
        the file runs as a script, never when another file imports it."""
        top = self.top_statement(node)
        return isinstance(top, cst.If) and is_main_check(top.test)

    def statement_of(self, node: cst.CSTNode) -> cst.BaseStatement | None:
        """The statement line or compound statement that contains `node`."""
        current: cst.CSTNode | None = node
        while current is not None:
            if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return current
            current = self.parent(current)
        return None

    def enclosing(
        self, node: cst.CSTNode, types: type[cst.CSTNode] | tuple[type[cst.CSTNode], ...]
    ) -> cst.CSTNode | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, types):
                return ancestor
        return None

    def block_of(self, statement: cst.CSTNode) -> Sequence[cst.BaseStatement]:
        """The statements of the block that holds `statement`."""
        parent = self.parent(statement)
        if isinstance(parent, cst.Module):
            return parent.body
        if isinstance(parent, cst.IndentedBlock):
            return parent.body
        return ()

    # -- scopes --------------------------------------------------------------------------------
    def scope_of(self, node: cst.CSTNode) -> Scope:
        for ancestor in self.ancestors(node):
            scope = self.data.scopes.get(id(ancestor))
            if scope is not None:
                return scope
        return self.data.module_scope

    def function_scope_of(self, node: cst.CSTNode) -> Scope:
        """The innermost function (or module) scope: class bodies and lambdas don't count."""
        scope = self.scope_of(node)
        while scope.kind in ("class", "lambda") and scope.parent is not None:
            scope = scope.parent
        return scope

    def qualname(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> str | None:
        return resolve(expr, self.scope_of(at if at is not None else expr))

    def body_of(self, scope: Scope) -> Sequence[cst.BaseStatement]:
        node = scope.node
        if isinstance(node, cst.Module):
            return node.body
        body = getattr(node, "body", None)
        return body.body if isinstance(body, cst.IndentedBlock) else ()

    def leading_imports_end(self) -> cst.BaseStatement | None:
        """The last statement of the module's leading block of imports (and docstring, and
        `pass` lines: a notebook's magics)."""
        anchor = None
        body = self.module.body
        for index, statement in enumerate(body):
            if is_pass(statement):
                continue
            if not (is_import(statement) or (index == 0 and is_docstring(statement))):
                break
            anchor = statement
        return anchor

    def class_of_method(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        parent = self.parent(function)
        if isinstance(parent, cst.IndentedBlock):
            owner = self.parent(parent)
            if isinstance(owner, cst.ClassDef):
                return owner
        return None

    # -- text ----------------------------------------------------------------------------------
    def code(self, node: cst.CSTNode, limit: int = 0) -> str:
        text = self.module.code_for_node(node)
        if limit and len(text) > limit:
            return text[: limit - 3] + "..."
        return text

    @property
    def prefers_single_quotes(self) -> bool:
        return self.data.single_quotes > self.data.double_quotes

    def quote(self, text: str) -> str:
        return f"'{text}'" if self.prefers_single_quotes else f'"{text}"'

    # -- positions (only for what is reported) ---------------------------------------------------
    def module_bytes(self) -> bytes:
        """`self.module.bytes` (the check that LibCST reproduces the file before it is written)."""
        return self._layout.whole_text().encode(self.module.encoding)

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based line and column of `node` in this (original) module: where LibCST's
        PositionProvider starts it (see `layout.py`)."""
        found = self._positions.get(id(node))
        if found is None:
            found = self._positions[id(node)] = self._layout.position(node, list(self.ancestors(node)))
        return found

    def fixed_text(self, new: cst.Module) -> str | None:
        """The code of `new`, made from this module by edits, from the original text where
        possible (see `layout.py`); None where it must be generated whole."""
        return self._layout.fixed_text(new)


def is_main_check(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"`."""
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].comparator, cst.SimpleString)
        and test.comparisons[0].comparator.value.strip("'\"") == "__main__"
    )


def cuda_index(call: cst.Call) -> cst.Arg | None:
    """The device index given to a `.cuda(...)` call: its first positional argument, or
    `device=` (`x.cuda(0)`, `x.cuda(device=0)`, `x.cuda(args.gpu)`); None for `x.cuda()`."""
    return next((arg for arg in call.args if arg.keyword is None or arg.keyword.value == "device"), None)


def chosen_gpu(index: cst.Arg | None) -> bool:
    """A `.cuda(...)` index that picks a GPU on purpose: a variable (`args.gpu`, `rank`) or a
    GPU other than the first (`.cuda(1)`, "put it on the second GPU"). `.cuda(0)` is the
    default GPU, as `.cuda()` is."""
    if index is None:
        return False
    value = index.value
    return not isinstance(value, cst.Integer) or value.evaluated_value != 0


def nodes_of(node: cst.CSTNode, kind: type[_N]) -> list[_N]:
    """The nodes of type `kind` in `node`'s subtree, `node` included (an explicit stack: no
    recursion limit on deep expressions)."""
    found: list[_N] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, kind):
            found.append(current)
        stack.extend(current.children)
    return found


def compared_with_a_string(function: cst.FunctionDef, name: str) -> bool:
    """`name` is compared with a string literal somewhere in the function (`device != "cpu"`)."""
    return any(
        isinstance(node.left, cst.Name)
        and node.left.value == name
        and any(isinstance(c.comparator, cst.SimpleString) for c in node.comparisons)
        for node in nodes_of(function.body, cst.Comparison)
    )


def class_body_names(klass: cst.ClassDef) -> list[tuple[str, cst.BaseExpression]]:
    """The names the class body binds with a plain `name = value`, each with its value."""
    found = []
    for statement in klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ():
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                found.append((small.targets[0].target.value, small.value))
    return found


def class_constants(klass: cst.ClassDef) -> list[str]:
    """The names the class body binds to literals (`input_size = (128, 128)` of a face
    detector): plain values, which another file reading `detector.input_size` must not take for
    one of the module's tensors."""
    return [name for name, value in class_body_names(klass) if _literal(value)]


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_literal(element.value) for element in node.elements)
    return isinstance(node, cst.Name) and node.value in ("True", "False", "None")


@lru_cache(maxsize=4)
def cuda_only_names(data: Collected) -> frozenset[str]:
    """The module's names bound only inside `if torch.cuda.is_available():` (Faster R-CNN's
    `nms_wrapper.py` imports `nms_gpu` so): calling one without a GPU raises NameError. Kept
    for the file being analysed (each call of a plain name asks)."""
    found = set()
    for name, bindings in data.module_scope.bindings.items():
        if bindings and all(_under_a_cuda_check(data, binding.node) for binding in bindings):
            found.add(name)
    return frozenset(found)


def _under_a_cuda_check(data: Collected, node: cst.CSTNode) -> bool:
    child, parent = node, data.parent.get(id(node))
    while parent is not None:
        if isinstance(parent, cst.If) and child is parent.body and _cuda_availability(parent.test):
            return True
        child, parent = parent, data.parent.get(id(parent))
    return False


def _cuda_availability(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Call) and not test.args and dotted_name(test.func) == "torch.cuda.is_available"

"""Checkpoint paths: which `torch.load` reads what a `torch.save` of the same run wrote.

A path is compared by its shape (the expression with the values it is formatted from
blanked), never by where it points: `'{}.pkl'.format(epoch)` saved each epoch and
`'{}.pkl'.format(best_epoch)` loaded after are the same files. A function's saved shapes
travel to other files in its summary (linking.py), but only those with a string literal in
them (`path + '/' + 'checkpoint.pth'`): a bare variable says nothing outside its file.
"""

from __future__ import annotations

import ast

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.tree import Tree


def path_shapes(tree: Tree, node: cst.BaseExpression) -> set[str]:
    """The path's shape, and for a name assigned once (`best_path = os.path.join(d, "best.pt")`)
    the shape of what it was assigned."""
    shapes = {_variable(tree, node) if isinstance(node, cst.Name) else _path_shape(tree, node)}
    opened = _opened_path(node)
    if opened is not None:
        return shapes | path_shapes(tree, opened)  # `torch.load(open(path, "rb"))`
    if isinstance(node, cst.Name):
        bindings = tree.scope_of(node).lookup(node.value) or []
        if len(bindings) == 1 and bindings[0].value is not None:
            shapes.add(_path_shape(tree, bindings[0].value))
        elif len(bindings) == 1 and isinstance(bindings[0].node, cst.With):
            for item in bindings[0].node.items:  # `with open(path, "wb") as f: torch.save(x, f)`
                target = item.asname.name if item.asname is not None else None
                opened = _opened_path(item.item)
                if isinstance(target, cst.Name) and target.value == node.value and opened is not None:
                    shapes |= path_shapes(tree, opened)
    return shapes


def _variable(tree: Tree, name: cst.Name) -> str:
    """A path held in a variable: its name, as the files' own helpers share it (`save_path`
    in `save_network` and in `load_network`). A parameter is told apart by where it is bound:
    the `fn` of a `model_save(fn)` says nothing of which file that is."""
    bindings = tree.scope_of(name).lookup(name.value) or []
    if any(b.kind == "param" for b in bindings):
        return f"{name.value}@{min(b.order for b in bindings)}"
    return name.value


def _opened_path(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The path of `open(path, ...)`."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "open" and node.args:
        return node.args[0].value
    return None


# the values a path is formatted from: a counter (`epoch`), an item (`his_loss[best]`), a sum (`best + 1`)
_COMPUTED = (cst.Name, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation)


class _Blanks(cst.CSTTransformer):
    """Replaces the values a path is formatted from (`epoch`, `best_epoch + 1`,
    `his_loss[best]`) with `_`: `str(i)` saved each epoch and `str(bestid + 1)` loaded after
    are the same files."""

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(value=cst.Name("_")) if isinstance(updated.value, _COMPUTED) else updated

    def leave_FormattedStringExpression(
        self, original: cst.FormattedStringExpression, updated: cst.FormattedStringExpression
    ) -> cst.FormattedStringExpression:
        blank = isinstance(updated.expression, _COMPUTED)
        return updated.with_changes(expression=cst.Name("_")) if blank else updated


def _path_shape(tree: Tree, node: cst.BaseExpression) -> str:
    """A checkpoint path with the names it is formatted from blanked: `'{}.pkl'.format(epoch)`
    saved each epoch and `'{}.pkl'.format(best_epoch)` loaded after are the same files. Line
    breaks, indentation and spaces around operators do not count (`torch.load(data_path\n +
    "w.pt")`; `str(epoch)+ '/Unet_epoch_'` loads what `str(epoch) + '/Unet_epoch_'` saved)."""
    blanked = node.visit(_Blanks())
    assert isinstance(blanked, cst.BaseExpression)  # only arguments and f-string parts change
    text = " ".join(tree.code(blanked).split())
    try:
        return ast.unparse(ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, RecursionError):
        return text


def saved_shapes(tree: Tree, program: Program, function: cst.FunctionDef) -> frozenset[str]:
    """The path shapes with a literal in them that `function` saves to, itself or through the
    methods of its class it calls on `self` (an early-stopping helper's `__call__` calls
    `self.save_checkpoint(...)`, which saves `path + '/' + 'checkpoint.pth'`)."""
    shapes: set[str] = set()
    seen: set[int] = set()
    todo = [function]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for save, _ in program.saves:
            if len(save.args) >= 2 and tree.enclosing(save, cst.FunctionDef) is current:
                shapes |= {s for s in path_shapes(tree, save.args[1].value) if has_literal(s)}
        todo += _own_methods_called(tree, current)
    return frozenset(shapes)


def has_literal(shape: str) -> bool:
    """The shape names a file by a string literal (`path + '/' + 'checkpoint.pth'`)."""
    return "'" in shape or '"' in shape


def _own_methods_called(tree: Tree, function: cst.FunctionDef) -> list[cst.FunctionDef]:
    """The methods of `function`'s class it calls as `self.name(...)`."""
    block = tree.parent(function)
    klass = tree.parent(block) if block is not None else None
    if not isinstance(klass, cst.ClassDef) or not function.params.params:
        return []
    me = function.params.params[0].name.value
    methods = {s.name.value: s for s in klass.body.body if isinstance(s, cst.FunctionDef)}
    found = []
    for call in tree.data.within(tree.data.calls, function):
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == me:
            method = methods.get(func.attr.value)
            if method is not None:
                found.append(method)
    return found

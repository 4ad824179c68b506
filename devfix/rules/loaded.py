"""What a program does with the value a `torch.load` gives (DEV010's evidence): the reads of the
name it is bound to, and whether they show CPU tensors (a legacy CPU constructor, NumPy)."""

from __future__ import annotations

import libcst as cst

from devfix.analysis import torch_api as api
from devfix.analysis.facts import FileFacts
from devfix.analysis.scopes import Scope
from devfix.analysis.tree import Tree, read_names


def reads_after(facts: FileFacts, binding: cst.CSTNode, name: str) -> list[cst.Name]:
    """The reads of `name` in the scope of `binding` after it, up to the name's next binding
    (`for data, label in loader:` further down) and in the value that binding assigns (`mel =
    torch.FloatTensor(mel[start:end])`), not counting one in the other branch of an `if`
    (`else: network_data = None`)."""
    tree = facts.tree
    scope = tree.function_scope_of(binding)
    start = tree.order(binding)
    later = [b for b in scope.bindings.get(name, ()) if b.order > start and not other_branch(tree, binding, b.node)]
    end = min(later, key=lambda b: b.order, default=None)
    line = tree.statement_of(end.node) if end is not None else None  # not `for data in loader:`, new `data` inside
    rebinding = line if isinstance(line, cst.SimpleStatementLine) else None
    owner = scope.node if scope.kind != "module" else tree.module
    return [
        node
        for node in read_names(owner, deferred=True)
        if node.value == name
        and tree.order(node) > start
        and (end is None or tree.order(node) < end.order or tree.statement_of(node) is rebinding)
        and not _bound_elsewhere(tree, node, scope, name)
    ]


def bound_to(tree: Tree, value: cst.CSTNode) -> cst.Name | None:
    """The name `value` is assigned to: `X = value`, or its place in `X, Y = value, other`."""
    holder = tree.parent(value)
    if isinstance(holder, cst.Element):
        values = tree.parent(holder)
        assign = tree.parent(values) if values is not None else None
        if isinstance(values, cst.Tuple) and isinstance(assign, cst.Assign) and len(assign.targets) == 1:
            targets = assign.targets[0].target
            if isinstance(targets, cst.Tuple) and len(targets.elements) == len(values.elements):
                index = next(i for i, element in enumerate(values.elements) if element is holder)
                target = targets.elements[index].value
                return target if isinstance(target, cst.Name) else None
        return None
    if isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name):
        return holder.targets[0].target
    return None


def other_branch(tree: Tree, call: cst.CSTNode, other: cst.CSTNode) -> bool:
    """`other` is in the `else` (or `elif`) of an `if` whose body holds `call`."""
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, cst.If) and tree.is_inside(call, ancestor.body):
            return ancestor.orelse is not None and tree.is_inside(other, ancestor.orelse)
    return False


def _bound_elsewhere(tree: Tree, node: cst.Name, scope: Scope, name: str) -> bool:
    """`node` is in a function of the scope that binds `name` itself: another value."""
    inner = tree.function_scope_of(node)
    return inner is not scope and name in inner.bindings


def held_on_the_cpu(facts: FileFacts, call: cst.Call) -> bool:
    """The loaded value, or a read of the name it is bound to (`mask = torch.load(f).float()`),
    goes to `torch.FloatTensor(...)` (WaveGrad's schedules; a speech course's `FloatTensor(mel[a:
    b])`) or to NumPy (a segmentation notebook's `img.numpy()`): both take CPU tensors only, so
    code that works loads CPU tensors there, on every machine."""
    tree = facts.tree
    top = _chain_top(tree, call)  # `torch.load(path).float()`
    name = bound_to(tree, top)
    reads = reads_after(facts, top, name.value) if name is not None else []
    # a read, or the item it is indexed for (`mel[start:end]`)
    items = [up if isinstance(up := tree.parent(r), cst.Subscript) and up.value is r else r for r in reads]
    return any(_cpu_constructor_argument(tree, n) or _converted_to_numpy(facts, n) for n in [call, *items])


def _cpu_constructor_argument(tree: Tree, node: cst.CSTNode) -> bool:
    """`node` is the data given to `torch.FloatTensor(...)` and the other CPU tensor types."""
    parent = tree.parent(node)
    outer = tree.parent(parent) if isinstance(parent, cst.Arg) and parent.keyword is None else None
    return isinstance(outer, cst.Call) and tree.qualname(outer.func) in api.CPU_TENSOR_TYPES


def _converted_to_numpy(facts: FileFacts, node: cst.CSTNode) -> bool:
    """`torch.load("mnist/train_data.pt").reshape(60000, 784).numpy()`: the tensor (or a name's
    read) goes straight to NumPy, which takes no CUDA tensor on any machine."""
    tree = facts.tree
    top = _chain_top(tree, node)
    attribute = tree.parent(top)
    return (
        isinstance(attribute, cst.Attribute)
        and attribute.value is top
        and attribute.attr.value == "numpy"
        and isinstance(tree.parent(attribute), cst.Call)
    )


def _chain_top(tree: Tree, node: cst.CSTNode) -> cst.CSTNode:
    """`node` with the calls of methods that keep a tensor where it is (`.float()`, `.reshape(...)`)
    made on it: the last of them, or `node` itself."""
    while (
        isinstance(attribute := tree.parent(node), cst.Attribute)
        and attribute.value is node
        and attribute.attr.value in api.SAME_PLACE_METHODS
        and isinstance(method := tree.parent(attribute), cst.Call)
    ):
        node = method
    return node

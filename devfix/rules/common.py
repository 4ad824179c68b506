"""Small node builders shared by rules (the edit vocabulary is in `devfix.edits`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from devfix.analysis.facts import FileFacts
from devfix.analysis.operations import string_of as string_value
from devfix.analysis.torch_api import gpu_number
from devfix.analysis.tree import Tree
from devfix.analysis.values import Kind, Origin

ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Call,
    cst.Subscript,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.Integer,
    cst.Float,
)


def expression(node: cst.CSTNode) -> cst.BaseExpression:
    """`node`, which the analysis found where an expression goes (a constructor call, a value
    moved), as one."""
    if not isinstance(node, cst.BaseExpression):
        raise TypeError(f"expected an expression, found {type(node).__name__}")
    return node


def parenthesize(expr: cst.BaseExpression) -> cst.BaseExpression:
    """Wrap `expr` in parentheses unless it binds tighter than attribute access."""
    if isinstance(expr, ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_call(receiver: cst.BaseExpression, method: str, args: Sequence[cst.Arg] = ()) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=parenthesize(receiver), attr=cst.Name(method)), args=list(args))


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, written without spaces around `=`."""
    return cst.Arg(
        value, keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    )


def move_to(receiver: cst.BaseExpression, device: cst.BaseExpression, non_blocking: bool = False) -> cst.Call:
    """`receiver.to(device)` (and `non_blocking=True` when asked)."""
    args = [cst.Arg(device)]
    if non_blocking:
        args[0] = args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        args.append(keyword_arg("non_blocking", cst.Name("True")))
    return method_call(receiver, "to", args)


def is_cuda_string(expr: cst.BaseExpression) -> bool:
    text = string_value(expr)
    return text is not None and (text == "cuda" or gpu_number(text) is not None)


def replace_arg_value(call: cst.Call, arg: cst.Arg, value: cst.BaseExpression) -> cst.Call:
    args = [a.with_changes(value=value) if a is arg else a for a in call.args]
    return call.with_changes(args=args)


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def add_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """Append `name=value` to a call, keeping the layout of a multi-line argument list."""
    new_arg = keyword_arg(name, value)
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new_arg])
    last = args[-1]
    trailing = last.comma if isinstance(last.comma, cst.Comma) else None
    if trailing is not None and isinstance(trailing.whitespace_after, cst.ParenthesizedWhitespace):
        # A multi-line call with a trailing comma: the new argument goes on its own line,
        # indented like the one before it.
        previous = args[-2].comma if len(args) >= 2 else None
        lead = previous.whitespace_after if isinstance(previous, cst.Comma) else call.whitespace_before_args
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=lead))
        return call.with_changes(args=[*args, new_arg.with_changes(comma=trailing)])
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    if trailing is not None:
        new_arg = new_arg.with_changes(comma=trailing)
    return call.with_changes(args=[*args, new_arg])


def grandparent(tree: Tree, node: cst.CSTNode) -> cst.CSTNode | None:
    """The parent of `node`'s parent: a statement's function or class (through its block), a
    target's assignment (through its `AssignTarget`)."""
    parent = tree.parent(node)
    return tree.parent(parent) if parent is not None else None


def assigned_name(facts: FileFacts, node: cst.CSTNode) -> str | None:
    """The target a value is assigned to, through method chains and wrappers:
    `model = nn.DataParallel(Net()).to(device)` -> "model" for `Net()`."""
    tree = facts.tree
    current = node
    for parent in tree.ancestors(node):
        if isinstance(parent, cst.Assign):
            if len(parent.targets) == 1 and parent.value is current:
                return tree.code(parent.targets[0].target)
            return None
        if isinstance(parent, cst.AnnAssign):
            return tree.code(parent.target) if parent.value is current else None
        if isinstance(parent, (cst.Call, cst.Attribute, cst.Arg)):
            current = parent
            continue
        return None
    return None


def describe_built(facts: FileFacts, call: cst.CSTNode) -> str:
    """ "model 'net'", "loss 'criterion'", or the constructor's code."""
    value = facts.value(call)
    name = assigned_name(facts, call)
    kind = "loss" if value is not None and value.kind is Kind.MODULE and _is_loss(facts, call) else "model"
    if name:
        return f"{kind} '{name}'"
    return f"`{facts.code(call, 40)}`"


def _is_loss(facts: FileFacts, call: cst.CSTNode) -> bool:
    func = getattr(call, "func", None)
    callee = facts.value(func) if func is not None else None
    return callee is not None and callee.qual is not None and callee.qual.endswith("Loss")


def evidence_line(facts: FileFacts, evidence: Iterable[Origin]) -> str:
    """Where the other side was put on the device: "a tensor on the device (line 12: `x.to(device)`)"."""
    shown = [o for o in evidence if o.node is not None and facts.tree.order(o.node) >= 0]
    if not shown:
        return "values on the device"
    if all(o.kind == "module" for o in shown):
        return "the module's own weights and inputs, on the module's device"
    origin = min((o for o in shown if o.kind != "module"), key=lambda o: facts.tree.order(o.node))
    line = facts.tree.position(origin.node)[0]
    if origin.note == "dataparallel":
        return f"the output of DataParallel on cuda:0 (line {line})"
    if origin.kind == "param" and origin.name:
        return f"'{origin.name}', on the device where other files of the project call this function (line {line})"
    return f"values on the device (line {line}: `{facts.code(origin.node, 40)}`)"

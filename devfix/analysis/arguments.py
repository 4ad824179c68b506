"""A call's arguments as the flow evaluated them: by keyword, by position, the tensors among
them, and the place a device argument names (`device="cuda"`, `.cuda(0)`, `x.device`).

Read by every part of the flow that interprets a call (calls.py, torch_calls.py, the
`Program` mixins), so that "what this call passes" has one meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import torch_api as api
from devfix.analysis.collect import Collected
from devfix.analysis.values import Kind, Place, Value

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.evaluate import Frame

Args = list[tuple[cst.Arg, Value]]


def evaluated(frame: Frame, call: cst.Call) -> Args:
    return [(arg, frame.expr(arg.value)) for arg in call.args]


def keyword(args: Args, name: str) -> tuple[cst.Arg, Value] | None:
    for arg, value in args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg, value
    return None


def positional(args: Args) -> list[tuple[cst.Arg, Value]]:
    return [(arg, value) for arg, value in args if arg.keyword is None and not arg.star]


def tensors(frame: Frame, args: Args) -> list[tuple[cst.CSTNode, Value]]:
    """Tensor operands among arguments, list/tuple items (`torch.cat([a, b])`) included."""
    found: list[tuple[cst.CSTNode, Value]] = []
    for arg, value in args:
        if value.kind is Kind.TENSOR:
            found.append((arg.value, value))
        elif value.kind is Kind.STRUCT and isinstance(arg.value, (cst.List, cst.Tuple)):
            for element in arg.value.elements:
                item = frame.program.values.get(id(element.value))
                if item is not None and item.kind is Kind.TENSOR:
                    found.append((element.value, item))
        elif value.kind is Kind.STRUCT and value.element is not None and value.element.kind is Kind.TENSOR:
            found.append((arg.value, value.element))
    return found


def escape_all(frame: Frame, args: Args) -> None:
    for _, value in args:
        frame.escape(value)


def parameter_name(arg: cst.Arg, index: int, params: Sequence[str], *, star_unnamed: bool = False) -> str | None:
    """The parameter an argument fills: its keyword, or the parameter at its position
    (`star_unnamed`: a `*args` in that position fills none)."""
    if arg.keyword is not None:
        return arg.keyword.value
    if index < len(params) and not (star_unnamed and arg.star):
        return params[index]
    return None


def device_keyword(args: Args) -> Place:
    found = keyword(args, "device")
    if found is None:
        return Place.CPU
    return target_place(found[1], found[0].value)


def target_place(value: Value, node: cst.CSTNode) -> Place:
    """The place a device argument names: a device value, a string, a tensor's device."""
    if value.kind is Kind.DEVICE:
        return value.place
    if value.kind is Kind.HOST:
        if value.text is not None:
            named = api.device_string_place(value.text)
            return Place.DEVICE if named == "device" else (Place.CPU if named == "cpu" else Place.UNKNOWN)
        if isinstance(node, cst.Integer):
            return Place.DEVICE  # `.cuda(0)`, `.to(0)`
        if isinstance(node, cst.Name) and node.value == "None":
            return Place.NONE
    return Place.UNKNOWN


def device_flag(value: Value, node: cst.CSTNode) -> str:
    if value.kind is Kind.DEVICE and value.flag:
        return value.flag
    if value.kind is Kind.HOST and value.text is not None:
        return "hard" if api.device_string_place(value.text) == "device" else "constant"
    return "unknown"


def names_cuda(arg: tuple[cst.Arg, Value]) -> bool:
    """`"torch.cuda.FloatTensor"`, `torch.cuda.FloatTensor`, `"cuda"`, `"cuda:0"`: a default
    tensor type or device only a GPU has (a choice, `... if cuda else ...`, is not)."""
    _, value = arg
    if value.qual in api.CUDA_TENSOR_TYPES:
        return True
    text = value.text  # the string constant, as the flow read it
    return text is not None and (text in api.CUDA_TENSOR_TYPES or text.split(":")[0] == "cuda")


def names_a_gpu(node: cst.BaseExpression) -> bool:
    """A literal that names an accelerator wherever it is passed as a device: `0`, `"cuda"`, `"cuda:1"`."""
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return isinstance(text, str) and api.device_string_place(text) == "device"
    return False


def moved_parameters(data: Collected, values: dict[int, Value], function: cst.FunctionDef) -> set[str]:
    """The parameters the function moves itself: `x.to(self.device)`, and a conversion of one
    moved at once, `torch.Tensor(x).to(self.device)` (a value network fed NumPy or tensors)."""
    given = function.params
    params = {p.name.value for p in [*given.posonly_params, *given.params, *given.kwonly_params][1:]}
    moved = set()
    start, end = data.order[id(function)], data.end_order.get(id(function), -1)
    for call in data.calls:
        func = call.func
        inside = start < data.order[id(call)] <= end
        if inside and isinstance(func, cst.Attribute) and func.attr.value in api.MOVE_METHODS:
            name = _converted(values, func.value)
            if name in params:
                moved.add(name)
    return moved


def _converted(values: dict[int, Value], node: cst.BaseExpression) -> str | None:
    """The name `x` of `x`, or of `torch.Tensor(x)`, `torch.tensor(x)`, `torch.from_numpy(x)`."""
    if isinstance(node, cst.Call) and node.args and not node.args[0].keyword:
        callee = values.get(id(node.func))
        qual = (callee.qual or "") if callee is not None else ""
        if qual.startswith("torch.") and qual[6:] in api.FROM_HOST | {"tensor"}:
            node = node.args[0].value
    return node.value if isinstance(node, cst.Name) else None


def made_of_sizes(node: cst.BaseExpression) -> bool:
    """`torch.LongTensor([text.size(1)])`, `torch.tensor([len(seq)])`: a tensor of sizes, which
    a model takes as its sequences' lengths."""
    if not (isinstance(node, cst.Call) and node.args and isinstance(node.func, (cst.Name, cst.Attribute))):
        return False
    factory = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value
    listed = node.args[0].value
    if factory not in ("tensor", "LongTensor", "IntTensor", "as_tensor") or not isinstance(
        listed, (cst.List, cst.Tuple)
    ):
        return False
    return bool(listed.elements) and all(a_size(element.value) for element in listed.elements)


def a_size(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        return node.func.value == "len"
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value == "size"
    return (
        isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
    )

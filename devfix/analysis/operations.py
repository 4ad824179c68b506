"""What attributes, subscripts, operators, comprehensions and iteration do to places.

The half of the device-flow semantics that needs no call: `model.fc`, `batch["ids"]`,
`x[i:i + bs]`, `a + b`, `pred == y`, `[t.to(d) for t in batch]`, `for x, y in loader`.
Calls are in `calls.py`, which builds on these.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import torch_api as api
from devfix.analysis.values import (
    GPU_COUNT,
    GPU_IDS,
    HOST,
    UNKNOWN,
    Kind,
    Origin,
    Place,
    Value,
    condition,
    derived,
    gpu_ids,
    join,
)

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.evaluate import Frame
    from devfix.analysis.state import FlowState


# -- small builders ----------------------------------------------------------------------------
def struct(
    items: tuple[Value, ...] | None = None,
    keys: tuple[tuple[str, Value], ...] | None = None,
    element: Value | None = None,
) -> Value:
    """A tuple, list or dict. Its place is where its tensors live: a sample index or a label
    string next to the tensors of a batch says nothing about the batch's device."""
    values = list(items or ()) + [v for _, v in keys or ()]
    tensors = [v for v in values if v.kind in (Kind.TENSOR, Kind.STRUCT)] or values
    if element is None and values:
        element = tensors[0]
        for value in tensors[1:]:
            element = join(element, value)
    if values:
        place = Place.NONE
        origins: frozenset[Origin] = frozenset()
        for value in tensors:
            place = place.join(value.place)
            origins = origins | value.origins
        if place is Place.UNKNOWN:
            origins = frozenset()
    else:
        place = element.place if element is not None else Place.UNKNOWN
        origins = element.origins if element is not None else frozenset()
    return Value(Kind.STRUCT, place, origins, items=items, keys=keys, element=element)


def string_of(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd prefixes: unknown
            return None
        return value if isinstance(value, str) else None
    return None


def formatted(left: Value, right: Value) -> Value:
    """`"cuda:%d" % args.gpu`: still a device string."""
    return left


def entered(value: Value) -> Value:
    """The value a `with` statement binds: `with open(f) as fh`, `with torch.no_grad()`."""
    return value if value.kind in (Kind.TENSOR, Kind.MODULE, Kind.STRUCT) else UNKNOWN


def is_no_grad_context(frame: Frame, node: cst.BaseExpression, value: Value) -> bool:
    qual = value.qual
    if isinstance(node, cst.Call):
        qual = frame.program.values.get(id(node.func), UNKNOWN).qual
        if qual == "torch.set_grad_enabled":
            return bool(node.args) and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "False"
    return qual in api.NO_GRAD_CONTEXTS and qual != "torch.set_grad_enabled"


# -- attributes ----------------------------------------------------------------------------------
def attribute(frame: Frame, node: cst.Attribute, base: Value) -> Value:
    name = node.attr.value
    if base.qual is not None:
        qual = f"{base.qual}.{name}"
        if qual in api.CUDA_TENSOR_TYPES:
            return Value(
                Kind.DEVICE,
                Place.DEVICE,
                frozenset({Origin("cuda-type", node)}),
                qual=qual,
                # `self.tt.FloatTensor` after `self.tt = torch.cuda if cuda else torch`: the check's reason
                flag=base.flag if base.flag in ("choice", "available") else "hard",
                tensor_type=True,
            )
        if qual in api.CPU_TENSOR_TYPES:
            return Value(Kind.DEVICE, Place.CPU, qual=qual, flag="constant", tensor_type=True)
        linked = frame.program.linked_qual(qual)  # `utils.train` after `import utils`, a project file
        return linked if linked is not None else Value(Kind.OTHER, Place.UNKNOWN, qual=qual)
    program = frame.program
    if base.kind is Kind.TENSOR:
        if name in ("data", "T", "mT", "H", "real", "imag", "grad"):
            return replace(base, grad=False, member=False) if name in ("data", "grad") else replace(base, member=False)
        if name == "device":
            return Value(Kind.DEVICE, base.place, base.origins, flag="relative")
        if name == "is_cuda":  # never true on a machine without CUDA
            return condition(
                True if base.place is Place.DEVICE else (False if base.place is Place.CPU else None), False, "available"
            )
        if name in api.NON_TENSOR_ATTRIBUTES:
            return HOST
        if base.member:
            return base  # `model.fc.weight`: lives with the module
        return UNKNOWN
    if base.kind is Kind.MODULE:
        return program.module_attribute(frame, base, name, node)
    if base.kind is Kind.DEVICE:
        if name == "type":
            return device_text(base)
        return HOST
    if base.kind is Kind.DATASET and base.cls is not None:
        return program.instance_attribute(frame, base, name, node)
    if base.kind is Kind.LOADER:
        if name == "dataset":
            return Value(Kind.DATASET, base.element.place if base.element is not None else Place.UNKNOWN)
        return HOST if name in ("batch_size", "num_workers") else UNKNOWN
    if base.kind is Kind.STRUCT and base.element is not None:
        program.note_access(base, "attr")
        return UNKNOWN
    if base.kind is Kind.OTHER:
        known = base.attr(name)
        if known is not None:
            return known
        if name == "is_cuda" and base.place is Place.UNKNOWN:
            # `next(model.parameters()).is_cuda` of a model a helper is handed (MEAL-V2's
            # `is_model_cuda`): whatever it is, false without CUDA
            return condition(None, False, "available")
        return program.instance_attribute(frame, base, name, node)
    return UNKNOWN


# -- subscripts ----------------------------------------------------------------------------------
def _an_element(frame: Frame, index: cst.BaseExpression) -> bool:
    """`ranks[r, q]`, `perm[i]`: a tensor indexed by Python numbers, maybe one element (0-dim),
    which indexes a tensor on any device (cnnimageretrieval's `idxs2images[ranks[r, q]]`); whether
    the meeting fails depends on dimensions the flow does not follow."""
    if not isinstance(index, cst.Subscript):
        return False
    values = frame.program.values
    return all(
        isinstance(element.slice, cst.Index)
        and element.slice.star is None
        and (value := values.get(id(element.slice.value))) is not None
        and value.kind is Kind.HOST
        for element in index.slice
    )


def _a_flat_element(frame: Frame, index: cst.BaseExpression) -> bool:
    """`cm[t.long(), p.long()] += 1` in `for t, p in zip(labels.view(-1), preds.view(-1)):`, the
    confusion-matrix idiom: `t` is one element (0-dim) of a flattened tensor, which indexes a
    tensor on any device as the number it holds (PointNet's CPU matrix counted from GPU labels)."""
    while isinstance(index, cst.Call) and isinstance(index.func, cst.Attribute) and not index.args:
        if index.func.attr.value not in api.DTYPES:
            return False
        index = index.func.value  # `t.long()`
    if not isinstance(index, cst.Name):
        return False
    parent = frame.program.data.parent.get(id(index))
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(parent, cst.For) and _binds(parent.target, index.value):
            loop = parent.iter
            zipped = isinstance(loop, cst.Call) and _qual(frame, loop.func) == "builtins.zip"
            sources = loop.args if isinstance(loop, cst.Call) and zipped else None
            return all(_flattened(arg.value) for arg in sources) if sources else _flattened(loop)
        parent = frame.program.data.parent.get(id(parent))
    return False


def _qual(frame: Frame, node: cst.BaseExpression) -> str | None:
    value = frame.program.values.get(id(node))
    return value.qual if value is not None else None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(element.value, name) for element in target.elements)
    return False


def _flattened(node: cst.BaseExpression) -> bool:
    """`x.view(-1)`, `x.reshape(-1)`, `x.flatten()`, `x.ravel()`: a one-dimensional tensor."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    name, args = node.func.attr.value, node.args
    if name in ("flatten", "ravel"):
        return not args
    minus_one = (
        len(args) == 1
        and isinstance(args[0].value, cst.UnaryOperation)
        and isinstance(args[0].value.operator, cst.Minus)
        and isinstance(args[0].value.expression, cst.Integer)
        and args[0].value.expression.value == "1"
    )
    return name in ("view", "reshape") and minus_one


def subscript(frame: Frame, node: cst.Subscript, base: Value) -> Value:
    indices = []
    sliced = False
    for element in node.slice:
        if isinstance(element.slice, cst.Index):
            indices.append((element.slice.value, frame.expr(element.slice.value)))
        elif isinstance(element.slice, cst.Slice):
            sliced = True
            for part in (element.slice.lower, element.slice.upper, element.slice.step):
                if part is not None:
                    frame.expr(part)
    if base.text == GPU_IDS and len(indices) == 1 and isinstance(indices[0][0], (cst.Integer, cst.UnaryOperation)):
        # `gpu_ids[0]` of `list(range(torch.cuda.device_count()))`: an IndexError without a GPU
        frame.program.gpu_only_calls.append(node)
    if base.kind is Kind.TENSOR and _legacy_element(node, indices, sliced):
        # `loss.data[0]` of PyTorch 0.3, where a loss had one element and this gave a Python
        # number (low-rank fusion's `valid_loss.data[0]`); a 0-dim tensor, or IndexError, today
        return UNKNOWN
    if base.kind is Kind.TENSOR:
        for index_node, index in indices:
            if (
                index.kind is Kind.TENSOR
                and not index.scalar
                and not _an_element(frame, index_node)
                and not _a_flat_element(frame, index_node)
            ):
                frame.program.meet(node, "index", [(node.value, base), (index_node, index)], detail="subscript")
        if (
            sliced
            and base.place is Place.CPU
            and frame.loops
            and not base.member
            and not frame.program.made_in(base, frame.loops[-1])
        ):
            # a batch sliced from data made before the loop: moved where it is sliced
            origin = Origin("slice", node, loop=frame.loops[-1])
            return Value(Kind.TENSOR, Place.CPU, frozenset({origin}), grad=base.grad and not frame.no_grad)
        # indexed under `torch.no_grad()`, a tensor that requires grad gives one that does not
        return replace(base, member=False, scalar=False, grad=base.grad and not frame.no_grad)
    if base.kind is Kind.STRUCT:
        if len(indices) == 1 and not sliced:
            key_node, _key = indices[0]
            if base.items is not None and isinstance(key_node, cst.Integer):
                position = int(key_node.value, 0)
                if -len(base.items) <= position < len(base.items):
                    frame.program.note_access(base, "index")
                    return frame.place_of(base.items[position])  # a module moved since: where it is now
            text = string_of(key_node)
            if text is not None:
                frame.program.note_access(base, "key")
                for name, value in base.keys or ():
                    if name == text:
                        return value
            else:
                frame.program.note_access(base, "index")
        else:
            frame.program.note_access(base, "index")
        if sliced:
            return base
        # `self.actors[i]` after `for x in self.actors: x.cuda()` (pytorch-maddpg): where it is now
        return frame.place_of(base.element) if base.element is not None else UNKNOWN
    if base.kind is Kind.LOADER:
        return UNKNOWN
    if base.kind is Kind.MODULE:
        return program_member(base)  # `model[0]` of an nn.Sequential
    if base.kind is Kind.HOST:
        return HOST
    return UNKNOWN


def _legacy_element(node: cst.Subscript, indices: list[tuple[cst.BaseExpression, Value]], sliced: bool) -> bool:
    """`x.data[0]`: one element read off `.data` by a constant index, the idiom of PyTorch 0.3."""
    value = node.value
    return (
        not sliced
        and len(indices) == 1
        and isinstance(indices[0][0], cst.Integer)
        and isinstance(value, cst.Attribute)
        and value.attr.value == "data"
    )


def program_member(module: Value) -> Value:
    """A layer, parameter or buffer of a module whose class the analysis does not know."""
    if module.place is Place.UNKNOWN:
        return UNKNOWN
    return Value(Kind.TENSOR, module.place, module.origins, member=True, grad=True)


# -- operators -------------------------------------------------------------------------------------
def arithmetic(
    frame: Frame,
    node: cst.CSTNode,
    left: Value,
    right: Value,
    left_node: cst.BaseExpression,
    right_node: cst.BaseExpression,
) -> Value:
    left, right = _number(left), _number(right)
    if left.kind is Kind.TENSOR and right.kind is Kind.TENSOR:
        if isinstance(getattr(node, "operator", None), cst.MatrixMultiply) or not (left.scalar or right.scalar):
            frame.program.meet(node, "op", [(left_node, left), (right_node, right)])
        return derived(Kind.TENSOR, [left, right], grad=(left.grad or right.grad) and not frame.no_grad, met=True)
    if left.kind is Kind.TENSOR:
        return _with_other(left, right)
    if right.kind is Kind.TENSOR:
        return _with_other(right, left)
    if left.kind is Kind.HOST and right.kind is Kind.HOST:
        if left.text is not None and isinstance(getattr(node, "operator", None), cst.Add):
            return replace(HOST, text=left.text + (right.text or ""))
        return HOST
    if left.kind is Kind.STRUCT and right.kind is Kind.STRUCT:
        return struct(element=join(left.element, right.element) if left.element and right.element else None)
    return UNKNOWN


def _with_other(tensor: Value, other: Value) -> Value:
    """A tensor combined with a non-tensor. A 0-dim tensor takes the other operand's device
    (PyTorch combines 0-dim CPU tensors with CUDA ones), so with an operand of unknown kind
    (`1 - action.pow(2) + eps`, `action` from a distribution) its place is unknown too."""
    if tensor.scalar and other.kind is not Kind.HOST:
        return UNKNOWN
    return replace(tensor, member=False, scalar=tensor.scalar and other.kind is Kind.HOST)


def _number(value: Value) -> Value:
    """`math.pi`, `np.e`, a constant of an imported module: a host number."""
    return (
        HOST if value.kind is Kind.OTHER and value.qual is not None and not value.qual.startswith("torch.") else value
    )


def compare(frame: Frame, node: cst.Comparison, values: list[Value]) -> Value:
    """Comparisons: tensors meet (`pred == y`); device checks give a truth on the GPU run."""
    operands = [node.left, *[t.comparator for t in node.comparisons]]
    cuda_type = _cuda_type_test(node) or _type_of_test(frame, node, values)
    if cuda_type is not None:
        return cuda_type
    tensors = [(n, v) for n, v in zip(operands, values) if v.kind is Kind.TENSOR]
    if len(tensors) >= 2 and not any(v.scalar for _, v in tensors):
        frame.program.meet(node, "op", tensors)
    if tensors:
        return derived(Kind.TENSOR, [v for _, v in tensors], grad=False, met=True)
    if len(values) == 2 and values[0].text == GPU_COUNT:
        return _gpu_count_test(node)
    return _device_test(node, values)


def _cuda_type_test(node: cst.Comparison) -> Value | None:
    """`x.type() == "torch.cuda.HalfTensor"`: never true on a machine without CUDA (the branch
    is for tensors already on a GPU)."""
    if len(node.comparisons) != 1:
        return None
    operator = node.comparisons[0].operator
    for call, other in ((node.left, node.comparisons[0].comparator), (node.comparisons[0].comparator, node.left)):
        if (
            isinstance(call, cst.Call)
            and not call.args
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "type"
            and (string_of(other) or "").startswith("torch.cuda.")
        ):
            if isinstance(operator, cst.Equal):
                return condition(None, False, "available")
            if isinstance(operator, cst.NotEqual):
                return condition(None, True, "available")
    return None


def _type_of_test(frame: Frame, node: cst.Comparison, values: list[Value]) -> Value | None:
    """`type(x) is torch.cuda.FloatTensor`: never true on a machine without CUDA, as
    `isinstance(x, torch.cuda.FloatTensor)` (GraphCL's sparse matrices follow the features)."""
    if len(node.comparisons) != 1:
        return None
    operator = node.comparisons[0].operator
    for call, other in ((node.left, values[1]), (node.comparisons[0].comparator, values[0])):
        if (
            isinstance(call, cst.Call)
            and len(call.args) == 1
            and frame.program.values.get(id(call.func), UNKNOWN).qual == "builtins.type"
            and other.tensor_type
            and other.qual in api.CUDA_TENSOR_TYPES
        ):
            if isinstance(operator, (cst.Is, cst.Equal)):
                return condition(None, False, "relative")
            if isinstance(operator, (cst.IsNot, cst.NotEqual)):
                return condition(None, True, "relative")
    return None


def _gpu_count_test(node: cst.Comparison) -> Value:
    """`torch.cuda.device_count() > 0` holds on a machine with one GPU; `> 1` may not."""
    comparator = node.comparisons[0].comparator
    if not isinstance(comparator, cst.Integer):
        return HOST
    count, limit = 1, int(comparator.value, 0)
    operator = node.comparisons[0].operator
    checks = {
        cst.GreaterThan: count > limit,
        cst.GreaterThanEqual: count >= limit,
        cst.Equal: count == limit,
        cst.NotEqual: count != limit,
        cst.LessThan: count < limit,
        cst.LessThanEqual: count <= limit,
    }
    result = checks.get(type(operator))
    if result is None or (result and limit > 0 and type(operator) in (cst.Equal,)):
        return HOST
    if limit >= 1 and type(operator) in (cst.GreaterThan, cst.GreaterThanEqual) and not result:
        # more than one GPU: a GPU machine may or may not have them, a CPU-only one has none
        return condition(None, False, "available")
    without = {
        cst.GreaterThan: limit < 0,
        cst.GreaterThanEqual: limit <= 0,
        cst.Equal: limit == 0,
        cst.NotEqual: limit != 0,
        cst.LessThan: limit > 0,
        cst.LessThanEqual: limit >= 0,
    }.get(type(operator))
    return condition(result, without, "available")


def _device_test(node: cst.Comparison, values: list[Value]) -> Value:
    """`device.type == "cuda"`, `device != "cpu"`, `args.gpu is not None`, `args.ngpu > 0`:
    true or false on a GPU machine, and why (the device's or the option's flag)."""
    if len(node.comparisons) != 1:
        return HOST
    left, right = values
    operator = node.comparisons[0].operator
    equal = isinstance(operator, (cst.Equal, cst.Is, cst.In))
    unequal = isinstance(operator, (cst.NotEqual, cst.IsNot, cst.NotIn))
    written = _written_devices(left, right)
    if written is not None and isinstance(operator, (cst.Equal, cst.NotEqual)):
        # `device = "cuda"`, then `if device == "cuda" and not torch.cuda.is_available():
        # pytest.skip(...)`: the same on every machine, like `USE_CUDA = True`
        same = written[0] == written[1]
        return condition(same if equal else not same, same if equal else not same, "constant")
    for this, other in ((left, right), (right, left)):
        place = _named_place(this)
        said = (
            other.text.split(":")[0].lower() if other.kind is Kind.HOST and other.text and other.flag is None else None
        )
        said = "cuda" if said == "gpu" else said  # `--mode GPU`: the option's own spelling
        if said is None and other.kind is Kind.DEVICE and other.flag in ("hard", "constant"):
            said = {Place.DEVICE: "cuda", Place.CPU: "cpu"}.get(other.place)  # `device == torch.device("cuda")`
        if (
            place is Place.UNKNOWN
            and said in ("cuda", "cpu")
            and ((equal and said == "cuda") or (unequal and said == "cpu"))
        ):
            # a device devfix cannot follow: the body runs only where the program was given CUDA
            return condition(None, False, "relative")
        if place is None and _unread_string(this) and ((equal and said == "cuda") or (unequal and said == "cpu")):
            # `self.device != "cpu"`, where the program picks "cuda" or "cpu" on a test devfix
            # cannot read (nequip's Kokkos build): a device check all the same
            return condition(None, False, "relative")
        if place is None or place is Place.UNKNOWN or said not in ("cuda", "cpu"):
            continue
        is_cuda = (place is Place.DEVICE) == (said == "cuda")
        truth = is_cuda if equal else (not is_cuda if unequal else None)
        on_cpu = None
        if this.flag in ("available", "choice", "relative"):
            # without a GPU the device is the CPU, and so is every tensor's (`texts.device`)
            on_cpu = (said == "cpu") if equal else ((said != "cpu") if unequal else None)
        elif this.flag in ("hard", "constant"):
            on_cpu = truth
        return condition(truth, on_cpu, this.flag)
    if left.flag in ("choice", "available") and isinstance(
        operator, (cst.IsNot, cst.GreaterThan, cst.GreaterThanEqual, cst.NotEqual)
    ):
        return condition(True, False, left.flag)  # `args.gpu is not None`: the user asked for a GPU
    if (
        _names_device_type(node.left)
        and right.kind is Kind.HOST
        and right.text in ("cuda", "cpu")
        and right.flag is None
    ):
        # `device.type == "cuda"` of a device devfix cannot follow: whatever it is, the body
        # only runs where the program was given a CUDA device, which a CPU-only machine lacks
        if (equal and right.text == "cuda") or (unequal and right.text == "cpu"):
            return condition(None, False, "relative")
    return HOST


def _written_devices(left: Value, right: Value) -> tuple[str, str] | None:
    """Two device strings the program writes itself ("cuda", "cuda:0", "cpu"), with no option's
    or check's flag: their comparison is a constant."""
    texts = []
    for value in (left, right):
        if value.kind is not Kind.HOST or value.flag is not None or not value.text or value.text == UNKNOWN_DEVICE_TEXT:
            return None
        if api.device_string_place(value.text) is None:
            return None
        texts.append(value.text.strip().lower())
    return texts[0], texts[1]


def _unread_string(value: Value) -> bool:
    """A host value that is no constant devfix knows and carries no option's or device's flag:
    `"cuda" if backend_is_gpu(x) else "cpu"`, a string a helper returns."""
    return value.kind is Kind.HOST and value.text is None and value.flag is None and value.truth is None


def option_test(node: cst.Comparison, *, passed_count: bool = False) -> Value | None:
    """`args.num_gpu == 1`, `len(opt.gpu_ids) > 0`, `args.gpu >= 0`, `opt.ngpu == 0`: a GPU
    option compared with 0, 1 or -1 says whether the user chose a GPU (a count of one, or an
    index); on a CPU-only machine the user chooses none. With `passed_count` (the option is a
    parameter of the function: its caller's count), a count of two or more too (`n_gpus > 1`).
    None for any other comparison."""
    if len(node.comparisons) != 1:
        return None
    comparator = node.comparisons[0].comparator
    said = string_of(comparator)
    if said is not None:
        return _option_string_test(node, said)
    negative, number = False, comparator
    if isinstance(comparator, cst.UnaryOperation) and isinstance(comparator.operator, cst.Minus):
        negative, number = True, comparator.expression
    if not isinstance(number, cst.Integer):
        return None
    limit = -int(number.value) if negative else int(number.value)
    if passed_count and asks_several(node, limit):
        return condition(None, False, "choice")  # `n_gpus > 1`: several GPUs, none on a CPU-only machine
    if limit not in (-1, 0, 1):
        return None
    chosen = {cst.GreaterThan: (0, -1), cst.GreaterThanEqual: (0, 1), cst.NotEqual: (0, -1), cst.Equal: (1,)}
    declined = {cst.Equal: (0, -1), cst.LessThan: (0, 1), cst.LessThanEqual: (0, -1)}
    operator = type(node.comparisons[0].operator)
    if limit in chosen.get(operator, ()):
        return condition(True, False, "choice")
    if limit in declined.get(operator, ()):
        return condition(False, True, "choice")
    return None


def asks_several(node: cst.Comparison, limit: int) -> bool:
    """`n_gpus > 1`, `ngpu >= 2`, `num_gpus == 4`: a GPU count of two or more. Whether the caller
    asked for that is unknown on a GPU machine, but a CPU-only machine has no GPU to count. (A
    script's own setting is not a caller's: Retinaface's `cfg['ngpu'] = 4` takes that branch on
    any machine.)"""
    operator = type(node.comparisons[0].operator)
    return (operator is cst.GreaterThan and limit >= 1) or (
        operator in (cst.GreaterThanEqual, cst.Equal) and limit >= 2
    )


def reads_a_switch(test: cst.BaseExpression, names: set[str]) -> bool:
    """`test` reads one of `names` (GPU switches) as itself: `n_gpus`, `not cuda`, `n_gpus > 1`, `gpu is not
    None`, `len(gpu_ids)`, `cuda and x`."""
    if isinstance(test, cst.Name):
        return test.value in names
    if isinstance(test, cst.UnaryOperation):
        return reads_a_switch(test.expression, names)
    if isinstance(test, cst.BooleanOperation):
        return reads_a_switch(test.left, names) or reads_a_switch(test.right, names)
    if isinstance(test, cst.Comparison):
        if counts_several(test):
            return False  # waveglow's `if num_gpus > 1: init_distributed(...)`: how many, not whether
        return reads_a_switch(test.left, names) or any(reads_a_switch(c.comparator, names) for c in test.comparisons)
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "len" and test.args:
        return reads_a_switch(test.args[0].value, names)
    return False


def counts_several(test: cst.Comparison) -> bool:
    """`num_gpus > 1`, `n_gpu >= 2`: a test of how many GPUs, which says nothing of whether."""
    number = test.comparisons[0].comparator if len(test.comparisons) == 1 else None
    return isinstance(number, cst.Integer) and asks_several(test, int(number.value))


def _option_string_test(node: cst.Comparison, said: str) -> Value | None:
    """`args.visible_gpus != "-1"`, `cmd_args.mode == "gpu"`: an option compared with a string
    that names the GPU, the CPU or "no GPU" says whether the user chose a GPU."""
    operator = type(node.comparisons[0].operator)
    if operator not in (cst.Equal, cst.NotEqual):
        return None
    word = said.strip().lower()
    if word in ("gpu", "cuda"):
        chose = operator is cst.Equal
    elif word in ("cpu", "-1", ""):
        chose = operator is cst.NotEqual
    else:
        return None
    return condition(True, False, "choice") if chose else condition(False, True, "choice")


def device_text(device: Value) -> Value:
    """`device.type`, `str(device)`: the kind of the device as a string that keeps the device's
    flag, so `"cuda" in str(device)` tests the device as `device.type == "cuda"` does."""
    place = device.place
    text = "cuda" if place is Place.DEVICE else ("cpu" if place is Place.CPU else UNKNOWN_DEVICE_TEXT)
    return replace(HOST, text=text, flag=device.flag)


# `str(device)` of a device devfix cannot follow (DBNet's `self.device`, "cuda:%s" or "cpu" by
# the caller's choice): no device's name, but still a device's
UNKNOWN_DEVICE_TEXT = "<device>"


def iterates_its_own_keys(program: FlowState, target: cst.Subscript) -> bool:
    """`for k in batch: batch[k] = batch[k].cuda()` (FewRel's framework): the loop walks the
    container's own keys, so the container is a dict of tensors moved entry by entry, not a
    tensor written into."""
    if not isinstance(target.value, cst.Name) or len(target.slice) != 1:
        return False
    index = target.slice[0].slice
    if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Name):
        return False
    container, key = target.value.value, index.value.value
    parent = program.data.parent.get(id(target))
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
        if isinstance(parent, cst.For) and isinstance(parent.target, cst.Name) and parent.target.value == key:
            walked = parent.iter
            if (
                isinstance(walked, cst.Call)
                and isinstance(walked.func, cst.Attribute)
                and walked.func.attr.value == "keys"
            ):
                walked = walked.func.value
            return isinstance(walked, cst.Name) and walked.value == container
        parent = program.data.parent.get(id(parent))
    return False


def prefix_test(receiver: Value, prefix: str | None) -> Value:
    """`args.device.startswith("cuda")`: a device test, like `device.type == "cuda"`."""
    said = (prefix or "").lower()
    place = _named_place(receiver)
    if said not in ("cuda", "cpu") or place is None:
        return HOST
    if place is Place.UNKNOWN:
        # a device devfix cannot follow: the body runs only where the program was given CUDA
        return condition(None, False, "relative") if said == "cuda" else HOST
    truth = (place is Place.DEVICE) == (said == "cuda")
    on_cpu = None
    if receiver.flag in ("available", "choice", "relative"):  # without a GPU, every device is the CPU
        on_cpu = said == "cpu"
    elif receiver.flag in ("hard", "constant"):
        on_cpu = truth
    return condition(truth, on_cpu, receiver.flag)


def _names_device_type(node: cst.BaseExpression) -> bool:
    """`<x>.type` or `<x>.device.type`: the kind of a device, spelled as devices spell it."""
    return isinstance(node, cst.Attribute) and node.attr.value == "type"


def _named_place(value: Value) -> Place | None:
    """Where a device value points: a `torch.device`, or the `.type` string of one (which
    carries the device's flag, unlike a string literal)."""
    if value.kind is Kind.DEVICE:
        return value.place
    if value.kind is Kind.HOST and value.text == UNKNOWN_DEVICE_TEXT:
        return Place.UNKNOWN
    if value.kind is Kind.HOST and value.text and value.flag is not None:
        named = api.device_string_place(value.text)
        return Place.DEVICE if named == "device" else (Place.CPU if named == "cpu" else None)
    return None


def comprehension(frame: Frame, node: cst.BaseSimpleComp | cst.DictComp) -> Value:
    """`[t.to(device) for t in batch]`, `{k: v.to(device) for k, v in batch.items()}`."""
    program = frame.program
    saved = frame.snapshot()
    comp_for: cst.CompFor | None = node.for_in
    while comp_for is not None:
        iterable = frame.expr(comp_for.iter)
        frame.bind(comp_for.target, iterate(frame, iterable, comp_for), comp_for)
        for clause in comp_for.ifs:
            frame.expr(clause.test)
        comp_for = comp_for.inner_for_in
    if isinstance(node, cst.DictComp):
        frame.expr(node.key)
        element = frame.expr(node.value)
    else:
        element = frame.expr(node.elt)
    frame.restore((saved[0], frame.heap))  # its names are its own; what it did to modules stays
    if _lists_gpu_ids(node, iterable):
        return gpu_ids()
    program.values[id(node)] = struct(element=element)
    return struct(element=element)


def _lists_gpu_ids(node: cst.BaseSimpleComp | cst.DictComp, iterable: Value) -> bool:
    """`[i for i in range(torch.cuda.device_count())]`: the GPUs' ids, as the range is."""
    comp_for = node.for_in
    return (
        iterable.text == GPU_IDS
        and isinstance(node, cst.ListComp)
        and comp_for.inner_for_in is None
        and not comp_for.ifs
        and isinstance(node.elt, cst.Name)
        and isinstance(comp_for.target, cst.Name)
        and node.elt.value == comp_for.target.value
    )


# -- iteration ------------------------------------------------------------------------------------------
def _one_dimensional(program: FlowState, tensor: Value) -> bool:
    """The tensor comes only from factories that make one dimension (`torch.linspace`,
    `torch.arange`): iterating it gives 0-dim tensors (transganformer's interpolation ratios)."""
    if not tensor.origins:
        return False
    for origin in tensor.origins:
        if origin.kind != "factory" or not isinstance(origin.node, cst.Call):
            return False
        callee = program.values.get(id(origin.node.func))
        if callee is None or callee.qual not in api.ONE_DIMENSIONAL_FACTORIES:
            return False
    return True


def iterate(frame: Frame, iterable: Value, loop: cst.CSTNode) -> Value:
    """The value each iteration binds."""
    if iterable.kind is Kind.LOADER:
        source = iterable.obj if isinstance(iterable.obj, int) else None  # a loader's obj: its call's id
        if source is not None:
            frame.program.loaders_iterated.add(source)
        element = iterable.element if iterable.element is not None else UNKNOWN
        return batch_of(element, source)
    if iterable.kind is Kind.STRUCT:
        return frame.place_of(iterable.element) if iterable.element is not None else UNKNOWN
    if iterable.kind is Kind.TENSOR:
        if iterable.member:
            # a member may be a `ModuleList`: its layers (members, whose `.to()` is in place), or
            # a parameter's rows; what attributes they hold may have been cached without grad
            return replace(iterable, grad=False)
        if _one_dimensional(frame.program, iterable):
            return replace(iterable, scalar=True)  # `for ratio in torch.linspace(0, 8, n)`: 0-dim items
        return iterable
    if iterable.kind is Kind.MODULE:
        return Value(Kind.MODULE, iterable.place, iterable.origins)  # layers of a container
    if iterable.kind is Kind.HOST:
        return HOST
    return UNKNOWN


def batch_of(element: Value, source: int | None) -> Value:
    """What one iteration over a loader yields: CPU tensors carry a "batch" origin naming the
    loader; the loop (or unpacking) that binds them names the variable the fix moves."""
    if element.place is not Place.CPU:
        return element
    origin = Origin("batch", element_marker, source=source)
    items = (
        tuple(batch_of(item, source) if item.kind in (Kind.TENSOR, Kind.STRUCT) else item for item in element.items)
        if element.items is not None
        else None
    )
    keys = (
        tuple((k, batch_of(v, source) if v.kind in (Kind.TENSOR, Kind.STRUCT) else v) for k, v in element.keys)
        if element.keys
        else None
    )
    inner = (
        batch_of(element.element, source)
        if element.element is not None and element.element is not element
        else element.element
    )
    return replace(element, origins=frozenset({origin}), items=items, keys=keys, element=inner)


element_marker = cst.Name("batch")  # the node of a batch origin not yet bound to a variable

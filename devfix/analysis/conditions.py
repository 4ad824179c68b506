"""What a condition says about the GPU: the tests a `Frame` (evaluate.py) reads in `if`,
`while`, conditional expressions and boolean operators.

A test's value carries two truths, on a GPU machine run as intended and on a CPU-only one
(`values.condition`), and why it holds: the user's choice (`args.cuda`, `opt.gpu_ids`, an
option compared with "gpu") or CUDA's availability. A branch a GPU check chose takes that
reason (`flagged`), so a device written in it is known for a choice or an availability.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis import operations
from devfix.analysis.torch_api import CUDA_FLAG_NAME, device_string_place
from devfix.analysis.values import HOST, UNKNOWN, Kind, Place, Value, condition, join

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.evaluate import Frame


def flag_operand(frame: Frame, node: cst.BaseExpression) -> bool:
    """`args.num_gpu`, `len(opt.gpu_ids)`, `config["n_gpus"]`: an option whose name says "GPU" and whose value the
    flow cannot follow, the left side of a comparison that tests the user's choice."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "len"
        and len(node.args) == 1
    ):
        node = node.args[0].value
    name = node.attr.value if isinstance(node, cst.Attribute) else (node.value if isinstance(node, cst.Name) else None)
    name = name or option_key(node)  # `config["n_gpus"]`
    if name is None or not CUDA_FLAG_NAME.match(name):
        return False
    value = frame.program.values.get(id(node))
    return (
        value is not None
        and (value.truth is None or value.flag == "choice")
        and value.kind in (Kind.OTHER, Kind.HOST, Kind.STRUCT)
    )


def option_compared(frame: Frame, node: cst.Comparison) -> bool:
    """A comparison that tests the user's choice of device: a GPU option on the left
    (`args.gpu >= 0`), or any option the flow cannot follow compared with "gpu" or "cuda"
    (`cmd_args.mode == "gpu"`, where `mode` was set from `--cuda` in another module)."""
    if flag_operand(frame, node.left):
        return True
    if len(node.comparisons) != 1:
        return False
    said = (operations.string_of(node.comparisons[0].comparator) or "").lower()
    value = frame.program.values.get(id(node.left))
    return (
        said in ("gpu", "cuda")
        and value is not None
        and value.truth is None
        and value.text is None
        and value.kind in (Kind.OTHER, Kind.HOST, Kind.STRUCT)
    )


def compared_with_a_bool(node: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """`x == True` -> (x, True), `x is False` / `x != True` -> (x, False): a test of `x` itself
    (or of its negation). None for anything else."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    target = node.comparisons[0]
    if not (isinstance(target.comparator, cst.Name) and target.comparator.value in ("True", "False")):
        return None
    positive = isinstance(target.operator, (cst.Equal, cst.Is))
    if not positive and not isinstance(target.operator, (cst.NotEqual, cst.IsNot)):
        return None
    return node.left, positive == (target.comparator.value == "True")


def option_key(node: cst.BaseExpression) -> str | None:
    """`opt["data.cuda"]`, `cfg["use_gpu"]`: an option read by its key, named by its last part."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        key = operations.string_of(node.slice[0].slice.value)
        return key.split(".")[-1] if key else None
    return None


def switch_passed_on(frame: Frame, node: cst.BaseExpression) -> bool:
    """`node` is a name that says "use the GPU" and that some call of the file passes on, or a
    parameter (`def fit_one_epoch(..., cuda)`: its callers' switch)."""
    if not isinstance(node, cst.Name) or not CUDA_FLAG_NAME.match(node.value):
        return False
    if frame.is_parameter(node):
        return True
    passed = frame.program.passed_names
    if passed is None:
        passed = frame.program.passed_names = frozenset(
            arg.value.value for call in frame.program.data.calls for arg in call.args if isinstance(arg.value, cst.Name)
        )
    return node.value in passed


def truth(value: Value) -> bool | None:
    """The truth of a condition's value on a GPU machine run as intended."""
    return value.truth


def negate(value: Value) -> Value:
    def flip(known: bool | None) -> bool | None:
        return None if known is None else not known

    return condition(flip(value.truth), flip(value.cpu), value.flag)


def boolean(left: Value, right: Value, conjunction: bool) -> Value:
    def combine(a: bool | None, b: bool | None) -> bool | None:
        if conjunction:
            return False if a is False or b is False else (True if a is True and b is True else None)
        return True if a is True or b is True else (False if a is False and b is False else None)

    known = combine(left.truth, right.truth)
    flags = {left.flag, right.flag} - {None, "constant", "fixed"}
    flag = "choice" if "choice" in flags else ("available" if flags else left.flag or right.flag)
    cpu = combine(left.cpu, right.cpu)
    if known is None and left.kind is not Kind.HOST and not (conjunction and cpu is False and flags):
        # `x or default`: the value, not a truth; but `model and hps.is_cuda` is a GPU check
        return join(left, right)
    return condition(known, cpu, flag)


def flagged(value: Value, flag: str | None) -> Value:
    """The branch a GPU check chose takes the check's reason: `"cuda" if args.cuda else "cpu"`
    is the user's choice, `True if torch.cuda.is_available() else False` an availability."""
    if flag not in ("choice", "available"):
        return value
    if value.kind is Kind.OTHER and value.qual == "torch.cuda":
        return replace(value, flag=flag)  # `torch.cuda if args.cuda else torch`: a module chosen by the check
    if value.kind is Kind.HOST and value.text is not None and device_string_place(value.text) is not None:
        place = Place.DEVICE if device_string_place(value.text) == "device" else Place.CPU
        return Value(Kind.DEVICE, place, flag=flag, text=value.text)  # `"cuda" if torch.cuda.is_available() else "cpu"`
    if value.kind is Kind.DEVICE or (value.kind is Kind.HOST and (value.truth is not None or value.text is not None)):
        return replace(value, flag=flag)
    return value


def is_constant(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(node, cst.Name) and node.value in ("True", "False", "None")
    )


def truth_of(value: Value) -> tuple[bool | None, bool | None]:
    """(truth on a GPU machine, truth on a CPU-only machine) of a condition's value."""
    return value.truth, value.cpu


def else_taken_without_gpu(frame: Frame, node: cst.If, flag: str | None) -> None:
    """`if torch.cuda.is_available(): device = torch.device("cuda") else: device = torch.device("cpu")`
    (KimRass's `get_device()`): a GPU machine takes the body, a CPU-only one the `else`, so what
    the body set was chosen by the check, as `overridden_without_gpu` says for the reverse."""
    tested = frame.program.values.get(id(node.test))
    if node.orelse is not None and (flag in ("available", "choice") or (tested is not None and tested.cpu is False)):
        chosen = flag if flag in ("available", "choice") else "available"
        overridden_without_gpu(frame, branch_body(node.orelse), chosen)


def overridden_without_gpu(frame: Frame, body: cst.BaseSuite, flag: str) -> None:
    """`self.dtype = torch.cuda.FloatTensor` then `if torch.cuda.is_available() is False:
    self.dtype = torch.FloatTensor` (BicycleGAN's solver): the GPU machine skips the branch, a
    CPU-only one takes it, so the CUDA type the name keeps was chosen by the check (`flag`).
    So is a switch: `gpu = True`, then `if not torch.cuda.is_available(): gpu = False`
    (ocr.pytorch's recognizer) is true only where there is a GPU."""
    for statement in body.body if isinstance(body, cst.IndentedBlock) else ():
        if isinstance(statement, cst.If):  # `else: if mps: device = "mps" else: device = "cpu"`
            overridden_without_gpu(frame, statement.body, flag)
            if statement.orelse is not None:
                overridden_without_gpu(frame, branch_body(statement.orelse), flag)
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    _flag_kept(frame, target.target, flag, small.value)


def branch_body(orelse: cst.If | cst.Else) -> cst.BaseSuite:
    """An `else:`'s block, or a block holding an `elif` as its one statement."""
    return orelse.body if isinstance(orelse, cst.Else) else cst.IndentedBlock(body=[orelse])


def _flag_kept(frame: Frame, target: cst.BaseExpression, flag: str, assigned: cst.BaseExpression) -> None:
    if isinstance(target, cst.Name):
        key = target.value
    elif (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == frame.self_name
    ):
        key = f"self.{target.attr.value}"
    else:
        return
    value = frame.env.get(key)
    if value is not None and value.kind is Kind.HOST and value.truth is not None:
        written = (
            assigned.value == "True" if isinstance(assigned, cst.Name) and assigned.value in ("True", "False") else None
        )
        if written is not None and written != value.truth:
            frame.env[key] = replace(value, flag=flag, cpu=written)  # the switch the CPU-only machine ends with
        return
    if value is not None and value.kind is Kind.HOST and value.text is not None:
        value = flagged(value, flag)  # `device = "cuda"` (an option's default), then `"cpu"` without a GPU
        if value.kind is Kind.DEVICE:
            frame.env[key] = value
        return
    if value is None or value.kind is not Kind.DEVICE:
        return
    chosen = replace(value, flag=flag)
    frame.env[key] = chosen
    values = frame.program.values
    for node_id, known in list(values.items()):
        if known is value:
            values[node_id] = chosen  # the assignment's own expression: its CUDA type was chosen too
    writes = frame.klass.writes.get(key[5:]) if key.startswith("self.") and frame.klass is not None else None
    if writes and writes[-1][1] is value:
        writes[-1] = (writes[-1][0], chosen)


def array_path(frame: Frame, test: cst.BaseExpression) -> list[str]:
    """The names that hold host data in the body of `if isinstance(x, np.ndarray):` (or `if
    type(x) is np.ndarray:`): `x`, whatever it was before (WaveRNN's `inv_mulaw_quantize` takes
    NumPy arrays and tensors alike), and the function's other parameters that the flow holds
    as tensors: that body is the function's NumPy path, where its callers pass arrays (a
    hand-pose repository's `trans_coords_from_patch_to_org` hands its `trans` to a NumPy
    helper there, and to a torch one in the `else`)."""
    name, kind = _type_test(test)
    value = frame.program.values.get(id(kind)) if kind is not None else None
    if not isinstance(name, cst.Name) or value is None or value.qual != "numpy.ndarray":
        return []
    found = [name.value] if name.value in frame.env else []
    function = frame.function
    for param in function.parameters() if function is not None else ():
        held = frame.env.get(param.name.value)
        if held is not None and held.kind is Kind.TENSOR and param.name.value != name.value:
            found.append(param.name.value)
    return found


_SEQUENCES = frozenset({"builtins.tuple", "builtins.list"})
_TENSOR_TYPES = frozenset({"torch.Tensor"})


def retyped_in_branch(frame: Frame, test: cst.BaseExpression) -> dict[str, Value]:
    """What the body of an `if` on a value's type holds: host data for `isinstance(x,
    np.ndarray)` (array_path); a tuple or list of items devfix does not know for
    `isinstance(input, tuple)` (an OpenNMT encoder's `forward` takes its lengths beside the
    batch, `(src, lengths)`, a Python list of ints), wherever the flow took `input` for a tensor;
    a tensor for `isinstance(x, torch.Tensor)`, wherever the flow took `x` for something else (a
    transform's `runner(x)` called with observations of several kinds: `x.cuda()` there is a move)."""
    found: dict[str, Value] = dict.fromkeys(array_path(frame, test), HOST)
    tested, kinds = _type_test(test)
    if not isinstance(tested, cst.Name) or kinds is None:
        return found
    kinds_of = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
    quals = {(frame.program.values.get(id(kind)) or UNKNOWN).qual for kind in kinds_of}
    held = frame.env.get(tested.value)
    if quals and quals <= _SEQUENCES and held is not None and held.kind is Kind.TENSOR:
        found[tested.value] = Value(Kind.STRUCT, Place.UNKNOWN, element=UNKNOWN)
    elif quals and quals <= _TENSOR_TYPES and (held is None or held.kind is not Kind.TENSOR):
        found[tested.value] = Value(Kind.TENSOR, Place.UNKNOWN)
    return found


def _type_test(test: cst.BaseExpression) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    """`isinstance(x, kind)` or `type(x) is kind` (`==`): the value tested and the type(s)."""
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance":
        if len(test.args) == 2:
            return test.args[0].value, test.args[1].value
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        typed, compared = test.left, test.comparisons[0]
        if isinstance(typed, cst.Call) and isinstance(typed.func, cst.Name) and typed.func.value == "type":
            if isinstance(compared.operator, (cst.Is, cst.Equal)) and len(typed.args) == 1:
                return typed.args[0].value, compared.comparator
    return None, None


def is_periodic(test: cst.BaseExpression) -> bool:
    """`step % args.save_every == 0`, `not (itr % cfg.sample_every)`: a check that a training
    loop passes every few iterations, so what it guards runs whenever the loop runs long."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _is_modulo(test.expression)
    return (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
        and (_is_modulo(test.left) or _is_modulo(test.comparisons[0].comparator))
    )


def _is_modulo(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Modulo)
        and not isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
    )


def has_items(test: cst.BaseExpression) -> bool:
    """`inds.numel() > 0`, `dets.shape[0] != 0`: a check that a detector's batch has detections,
    which real data passes, so what it guards (the NMS) runs. Not `len(x) > 0`: `if
    len(opt.gpu_ids) > 0:` is a GPU test."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    target = test.comparisons[0]
    zero = isinstance(target.comparator, cst.Integer) and target.comparator.value == "0"
    if not (zero and isinstance(target.operator, (cst.GreaterThan, cst.NotEqual))):
        return False
    left = test.left
    if isinstance(left, cst.Subscript):  # `x.shape[0]`
        return isinstance(left.value, cst.Attribute) and left.value.attr.value == "shape"
    return (
        isinstance(left, cst.Call)
        and isinstance(left.func, cst.Attribute)
        and left.func.attr.value in ("numel", "nelement", "size")
    )

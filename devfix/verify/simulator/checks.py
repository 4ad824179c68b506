"""Device checks and the errors they raise, with the texts real CUDA PyTorch uses.

Every check runs where the user's call is still visible (the function mode), and
records the first failure with the user's file and line and the devfix rule that
fixes it (``device_error``), then raises the real exception.
"""

from __future__ import annotations

import ast
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from types import FrameType
from typing import Any, NoReturn

import torch

from devfix.verify.simulator import state as _state
from devfix.verify.simulator.state import Event
from devfix.verify.simulator.tags import (
    CPU,
    TORCH_DIR,
    copy_thrown_away,
    cuda,
    made_by_factory,
    origin,
    real_type,
    sim_device,
    sim_index,
)

FORK_MESSAGE = (
    "Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
    "multiprocessing, you must use the 'spawn' start method"
)
LOAD_MESSAGE = (
    "Attempting to deserialize object on a CUDA device but "
    "torch.cuda.is_available() is False. If you are running on a CPU-only "
    "machine, please use torch.load with map_location=torch.device('cpu') "
    "to map your storages to the CPU."
)


# ---------------------------------------------------------------------------
# recording and raising
# ---------------------------------------------------------------------------
def device_error(
    exc_type: type[BaseException],
    message: str,
    operation: str,
    devices: dict[str, str],
    rule: str,
    detail: str = "",
    frame: FrameType | None = None,
    text: str | None = None,
) -> NoReturn:
    """Record the first device error with the user's file/line, then raise it
    with the exact text real CUDA PyTorch uses (`text`, when the exception
    carries more lines than the one-line `message` the report shows)."""
    exc = exc_type(text or message)
    st = _state.current()
    if st is not None:
        uf = st.user_frame(frame or sys._getframe(1))
        st.record(
            Event(
                "device",
                message,
                operation,
                devices,
                rule,
                detail,
                uf.f_code.co_filename if uf else None,
                uf.f_lineno if uf else None,
                exc,
                st.user_callers(uf),
            )
        )
    raise exc


def touch_device() -> None:
    """Called whenever the program puts something on a simulated device."""
    st = _state.current()
    if st is None:
        return
    if st.in_bad_fork:
        device_error(RuntimeError, FORK_MESSAGE, "cuda init in worker", {}, "DEV006")
    st.device_used = True


def norm_device(dev: Any) -> str | None:
    """'cuda', 0, torch.device('cuda:0') -> 'cuda:0'; 'cpu' -> 'cpu'; other -> None.

    A bare 'cuda' is the current device of the thread (``torch.cuda.set_device``)."""
    if dev is None:
        return None
    if isinstance(dev, int) and not isinstance(dev, bool):
        dev = torch.device("cuda", dev)
    try:
        d = torch.device(dev)
    except Exception:  # noqa: BLE001 - anything torch does not take for a device is not one
        return None
    if d.type == "cuda":
        return cuda_device(d.index)
    if d.type == "cpu":
        return CPU
    return None


def cuda_device(index: int | None = None) -> str:
    """'cuda:N' for `index`, a None index (a bare 'cuda') being the current device of the
    thread; an index past the simulated GPUs fails as on a real machine (``check_ordinal``)."""
    if index is None:
        st = _state.current()
        index = st.current_device if st else 0
    check_ordinal(index)
    return cuda(index)


ORDINAL_MESSAGE = "CUDA error: invalid device ordinal"
ORDINAL_TEXT = (
    ORDINAL_MESSAGE + "\n"
    "GPU device may be out of range, do you have enough GPUs?\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\n"
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)
_ACCELERATOR_ERROR: type[BaseException] = getattr(torch, "AcceleratorError", RuntimeError)  # what C10_CUDA_CHECK raises


def check_ordinal(index: int, operation: str = "") -> None:
    """A device index past the simulated GPUs fails as on a machine with that many:
    ``torch.AcceleratorError: CUDA error: invalid device ordinal``."""
    st = _state.current()
    n = st.devices if st is not None else 1
    if 0 <= index < n:
        return
    have = f"{n} GPU" + ("s" if n != 1 else "")
    device_error(
        _ACCELERATOR_ERROR,
        ORDINAL_MESSAGE,
        f"{operation or 'cuda:' + str(index)} on a machine with {have}",
        {},
        "",
        f"the script uses cuda:{index} but the simulated machine has {have} (--devices {n}); "
        f"a real one fails the same way: run with --devices {index + 1} to simulate more",
        frame=sys._getframe(1),
        text=ORDINAL_TEXT,
    )


# ---------------------------------------------------------------------------
# which rule fixes it
# ---------------------------------------------------------------------------
def in_optimizer_code() -> bool:
    f: FrameType | None = sys._getframe(1)
    optim_dir = os.path.join(TORCH_DIR, "optim") + os.sep
    while f is not None:
        if os.path.abspath(f.f_code.co_filename).startswith(optim_dir):
            return True
        f = f.f_back
    return False


def shares_loop(path: str, a: int, b: int) -> bool:
    """True when lines a and b lie in one for/while loop of the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except Exception:  # noqa: BLE001 - unreadable or unparsable source: no answer
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            lo, hi = node.lineno, node.end_lineno or node.lineno
            if lo <= a <= hi and lo <= b <= hi:
                return True
    return False


def _caller_in(frame: FrameType | None, path: str) -> FrameType | None:
    """The innermost frame of file `path` that (indirectly) called `frame`."""
    path = os.path.abspath(path)
    f = frame.f_back if frame is not None else None
    while f is not None:
        if os.path.abspath(f.f_code.co_filename) == path:
            return f
        f = f.f_back
    return None


def classify(cpu_t: torch.Tensor, cuda_t: torch.Tensor | None, meet_frame: FrameType | None) -> tuple[str, str]:
    """Pick the rule that fixes a CPU/GPU mismatch, from where the CPU tensor came from."""
    if in_optimizer_code():
        return "DEV003", "the optimizer was built before the model was moved; its state stayed on the CPU"
    if isinstance(cpu_t, torch.nn.Parameter):
        return "DEV003", "the model's parameters are still on the CPU"
    if copy_thrown_away(cpu_t):
        return (
            "DEV011",
            "a device copy of this tensor was made with .to() or .cuda() and thrown away; the tensor stayed on the CPU",
        )
    where_made = origin(cpu_t)
    if where_made is not None:
        ofile, oline, ofunc, in_module = where_made
        where = f"{os.path.basename(ofile)}:{oline} in {ofunc}()"
        if in_module and ofunc == "__init__":
            return "DEV012", f"the CPU tensor is a plain module attribute created at {where}"
        if in_module:
            return "DEV007", f"the CPU tensor was created at {where} without device="
        # the tensors meet in the file that created the CPU tensor: the meeting's frame, else None
        meet_here = (
            meet_frame
            if meet_frame is not None and os.path.abspath(ofile) == os.path.abspath(meet_frame.f_code.co_filename)
            else None
        )
        if meet_here is not None and shares_loop(ofile, oline, meet_here.f_lineno):
            return "DEV008", f"the CPU tensor was created in the loop at {where} without device="
        caller = _caller_in(meet_frame, ofile) if meet_here is None and made_by_factory(cpu_t) else None
        if caller is not None and shares_loop(ofile, oline, caller.f_lineno):
            # a factory's own result, made in the loop of a script and handed to the `forward`
            # of a model of another file
            return "DEV008", f"the CPU tensor was created in the loop at {where} without device="
        if made_by_factory(cpu_t) and not shares_loop(ofile, oline, oline):
            # a factory's own result, made by the program outside any loop (an input prepared
            # for a prediction, a one-off step): devfix creates it on the device
            return "DEV008", f"the CPU tensor was created at {where} without device="
        if (
            meet_here is not None
            and meet_here.f_code.co_name == ofunc
            and made_by_factory(cpu_t)
            and shares_loop(ofile, meet_here.f_lineno, meet_here.f_lineno)
        ):
            # an accumulator made before the loop (`preds = torch.tensor([])`), then joined
            # with the model's outputs
            return "DEV008", f"the CPU tensor was created at {where} without device="
    if isinstance(cuda_t, torch.nn.Parameter):
        return "DEV004", f"the model is on {sim_device(cuda_t)} but this input is on the CPU"
    return "DEV004", "this tensor was never moved to the device"


# ---------------------------------------------------------------------------
# argument names, as the error texts and the report say them
# ---------------------------------------------------------------------------
ROLES: dict[str, list[str]] = {
    "linear": ["input", "weight", "bias"],
    "bilinear": ["input1", "input2", "weight", "bias"],
    "embedding": ["input", "weight"],
    "embedding_bag": ["input", "weight", "offsets"],
    "batch_norm": ["input", "running_mean", "running_var", "weight", "bias"],
    "instance_norm": ["input", "running_mean", "running_var", "weight", "bias"],
    "layer_norm": ["input", "normalized_shape", "weight", "bias"],
    "group_norm": ["input", "num_groups", "weight", "bias"],
    "prelu": ["input", "weight"],
    "lstm": ["input", "hx", "params"],
    "gru": ["input", "hx", "params"],
    "rnn_tanh": ["input", "hx", "params"],
    "rnn_relu": ["input", "hx", "params"],
    "mm": ["input", "mat2"],
    "bmm": ["input", "mat2"],
    "addmm": ["input", "mat1", "mat2"],
}
for _n in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
    ROLES[_n] = ["input", "weight", "bias"]
CONV = {n for n in ROLES if n.startswith("conv")}
RNN = {"lstm", "gru", "rnn_tanh", "rnn_relu"}


def op_name(func: Callable[..., Any]) -> tuple[str, bool]:
    name: str = getattr(func, "__name__", str(func))
    qual: str = getattr(func, "__qualname__", "")
    is_method = qual.startswith(("TensorBase.", "Tensor."))
    return name, is_method


def named_tensors(
    func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]
) -> list[tuple[str, torch.Tensor]]:
    """[(role, tensor)] in argument order, with readable role names."""
    name, is_method = op_name(func)
    names = ROLES.get(name)
    if names is None:
        names = ["self", "other"] if is_method else ["input", "other"]
        try:  # Python-level functions (F.cross_entropy...) have real names
            bound = inspect.signature(func).bind_partial(*args, **kwargs).arguments
            items: list[tuple[str, Any]] | None = list(bound.items())
        except Exception:  # noqa: BLE001 - builtins without a signature, arguments that do not bind
            items = None
        if items is not None:
            return _flatten_named(items)
    items = [(names[i] if i < len(names) else f"arg{i}", a) for i, a in enumerate(args)]
    items += list(kwargs.items())
    return _flatten_named(items)


def _flatten_named(items: Iterable[tuple[str, Any]]) -> list[tuple[str, torch.Tensor]]:
    out: list[tuple[str, torch.Tensor]] = []
    for role, val in items:
        if isinstance(val, torch.Tensor):
            out.append((role, val))
        elif isinstance(val, (list, tuple)):
            for i, v in enumerate(val):
                if isinstance(v, torch.Tensor):
                    out.append((f"{role}[{i}]", v))
        elif isinstance(val, dict):
            for k, v in val.items():
                if isinstance(v, torch.Tensor):
                    out.append((f"{role}[{k!r}]", v))
    return out


_LEGACY = {
    torch.float32: "FloatTensor",
    torch.float64: "DoubleTensor",
    torch.float16: "HalfTensor",
    torch.bfloat16: "BFloat16Tensor",
    torch.int64: "LongTensor",
    torch.int32: "IntTensor",
    torch.int16: "ShortTensor",
    torch.int8: "CharTensor",
    torch.uint8: "ByteTensor",
    torch.bool: "BoolTensor",
    torch.complex64: "ComplexFloatTensor",
    torch.complex128: "ComplexDoubleTensor",
}


def legacy_type(t: torch.Tensor, on_cuda: bool) -> str:
    """Legacy type name as real PyTorch prints it: torch[.cuda].FloatTensor."""
    name = _LEGACY.get(t.dtype, "Tensor")
    return f"torch.cuda.{name}" if on_cuda else f"torch.{name}"


def _packed_batch_sizes(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[torch.Tensor, ...]:
    """The `batch_sizes` of a packed RNN call (`lstm(data, batch_sizes, hx, ...)`), which
    `pack_padded_sequence` keeps on the CPU."""
    if len(args) > 1 and isinstance(args[1], torch.Tensor) and args[1].dtype == torch.int64:
        return (args[1],)
    return ()


def _ctc_targets_and_lengths(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[torch.Tensor, ...]:
    """A CTC loss's targets and lengths (cuDNN's CTC requires CPU lengths; the native kernel
    copies CPU targets to the GPU itself)."""
    rest = list(args[1:4]) + [v for k, v in kwargs.items() if k in ("targets", "input_lengths", "target_lengths")]
    return tuple(t for t in rest if isinstance(t, torch.Tensor))


def _sizes(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[torch.Tensor, ...]:
    """Every tensor after the input of a call that reads them as sizes (`F.pad(x, [dx // 2,
    ...])` with `dx = torch.tensor([diff])`): PyTorch turns them into Python numbers."""
    rest = [*args[1:], *(v for k, v in kwargs.items() if k != "input")]
    return tuple(t for _, t in _flatten_named((str(i), v) for i, v in enumerate(rest)))


# the arguments real CUDA wants (or accepts) on the host, by the called function's name
HOST_ARGUMENTS: dict[str, Callable[[Sequence[Any], dict[str, Any]], tuple[torch.Tensor, ...]]] = {
    **dict.fromkeys(RNN, _packed_batch_sizes),
    "ctc_loss": _ctc_targets_and_lengths,
    **dict.fromkeys(("pad", "interpolate", "upsample", "adaptive_avg_pool2d", "adaptive_max_pool2d"), _sizes),
}


def host_arguments(name: str, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> tuple[torch.Tensor, ...]:
    """Arguments of the call `name` that real CUDA wants (or accepts) on the host."""
    pick = HOST_ARGUMENTS.get(name)
    return pick(args, kwargs or {}) if pick is not None else ()


# ---------------------------------------------------------------------------
# the same-device check of ordinary calls
# ---------------------------------------------------------------------------
Placed = tuple[int, str, torch.Tensor, str]  # a tensor argument: (position, role, tensor, device)


def check_same_device(
    func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], frame: FrameType | None
) -> None:
    """Tensors of one call must be on one device; 0-dim CPU tensors may join a
    device call (as on real CUDA). The first device met is the call's device,
    as in TensorIterator; the first argument elsewhere is the one reported."""
    named = named_tensors(func, args, kwargs)
    if len(named) < 2:
        return
    name, is_method = op_name(func)
    host = host_arguments(name, args, kwargs)
    placed: list[Placed] = []
    for pos, (role, t) in enumerate(named):
        i = sim_index(t)
        if i is not None:
            placed.append((pos, role, t, cuda(i)))
        elif t.dim() > 0 and real_type(t) == "cpu" and not any(t is h for h in host):
            placed.append((pos, role, t, CPU))
    common = next((p for p in placed if p[3] != CPU), None)
    if common is None:
        return
    other = next((p for p in placed if p[3] != common[3]), None)
    if other is None:
        return
    _, _, ct, cdev = common
    _, _, ot, odev = other
    pair = sorted([common, other])
    devices = {p[1]: p[3] for p in pair}
    op = f"Tensor.{name}()" if is_method else f"{name}()"
    own_message = CALL_MESSAGES.get(name)
    msg = own_message(common, other) if own_message is not None else None
    if msg is None:
        msg = generic_message(cdev, odev)
    st = _state.current()
    meet = st.user_frame(frame) if st is not None else None
    if odev == CPU:
        rule, detail = classify(ot, ct, meet)
    else:
        rule, detail = classify_cross_gpu(ct, cdev, ot, odev)
    device_error(RuntimeError, msg, op, devices, rule, detail, frame=frame)


def generic_message(first: str, second: str) -> str:
    """TensorIterator's text: a call with any CUDA argument runs the CUDA kernel,
    whose device is the first non-CPU one; so a CUDA device is named first."""
    return f"Expected all tensors to be on the same device, but found at least two devices, {first} and {second}!"


def conv_message(cuda_t: torch.Tensor, cuda_role: str, cpu_t: torch.Tensor, cpu_role: str) -> str:
    inp_cuda = cuda_role == "input"
    other = cpu_role if inp_cuda else cuda_role
    inp_t, oth_t = (cuda_t, cpu_t) if inp_cuda else (cpu_t, cuda_t)
    msg = (
        f"Input type ({legacy_type(inp_t, inp_cuda)}) and {other} type "
        f"({legacy_type(oth_t, not inp_cuda)}) should be the same"
    )
    if not inp_cuda:
        msg += " or input should be a MKLDNN tensor and weight is a dense tensor"
    return msg


def rnn_message(roles: dict[str, str]) -> str | None:
    hid = next((r for r in roles if r.startswith("hx")), None)
    par = next((r for r in roles if r.startswith("params")), None)
    if "input" in roles and hid:
        return (
            "Input and hidden tensors are not at the same device, found input "
            f"tensor at {roles['input']} and hidden tensor at {roles[hid]}"
        )
    if "input" in roles and par:
        return (
            "Input and parameter tensors are not at the same device, found input "
            f"tensor at {roles['input']} and parameter tensor at {roles[par]}"
        )
    return None


def _conv_call_message(common: Placed, other: Placed) -> str | None:
    """A convolution's own text when its input and weight (or bias) meet, one on the CPU."""
    _, cr, ct, _ = common
    _, orole, ot, odev = other
    if odev == CPU and {orole, cr} <= {"input", "weight", "bias"} and "input" in (orole, cr):
        return conv_message(ct, cr, ot, orole)
    return None


def _rnn_call_message(common: Placed, other: Placed) -> str | None:
    """An RNN's own text when its input meets its hidden state or parameters."""
    return rnn_message({other[1]: other[3], common[1]: common[3]})


# the call's own error text, by the called function's name, from the call's device tensor and
# the other tensor; None (or no entry): TensorIterator's generic text
CALL_MESSAGES: dict[str, Callable[[Placed, Placed], str | None]] = {
    **dict.fromkeys(CONV, _conv_call_message),
    **dict.fromkeys(RNN, _rnn_call_message),
}


def replica_note() -> str:
    """'in DataParallel replica 1 on cuda:1, ' while a replica runs, else ''."""
    st = _state.current()
    rep = getattr(st.local, "replica", None) if st is not None else None
    if not rep or rep[0] is None:
        return ""
    return f"in DataParallel replica {rep[0]} on {cuda(rep[1])}, "


def classify_cross_gpu(a: torch.Tensor, adev: str, b: torch.Tensor, bdev: str) -> tuple[str, str]:
    """Two simulated GPUs meet: a plain module attribute left on one GPU while a
    DataParallel replica runs on another is DEV012; otherwise no devfix rule
    fixes it (model-parallel code must move activations between its stages)."""
    for t, dev in ((b, bdev), (a, adev)):
        where_made = origin(t)
        if where_made is not None and where_made[3] and where_made[2] == "__init__":
            where = f"{os.path.basename(where_made[0])}:{where_made[1]} in __init__()"
            return "DEV012", (
                f"{replica_note()}the tensor on {dev} is a plain module attribute created at {where}: "
                "DataParallel copies parameters and buffers to each GPU, not plain attributes"
            )
    return "", (
        f"{replica_note()}tensors on {adev} and {bdev} meet: move one to the other's device "
        "(x.to(y.device)), as model-parallel code does between its stages"
    )

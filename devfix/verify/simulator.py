"""The simulated CUDA device: one ``cuda:0`` whose tensors really live on the CPU.

Design (why it looks like this)
-------------------------------
*Where the "is on cuda" bit lives.*  A tensor's device is a property of its
storage: views, ``.data``, ``.detach()``, ``Parameter(t)`` and
``param.data = t`` (which ``Module._apply`` uses for ``model.to(device)``) all
share storage with the tensor they come from.  So the simulated-CUDA tag is an
attribute on the tensor's ``UntypedStorage`` Python object.  PyTorch preserves
that object for as long as the storage lives, so the tag follows every alias,
dies with the storage and never goes stale (an id-keyed side table would be
reused after free).  No ``Tensor`` subclass is involved, so ``Parameter`` and
``Module._apply`` keep working untouched.

*Two modes.*
- ``_FunctionMode`` (a ``TorchFunctionMode``) sees every public call with its
  user-level arguments: ``F.linear(input, weight)``, ``x.to(device)``,
  ``x.device``, ``x.numpy()``.  It implements the device API (``to``/``cuda``/
  ``cpu``/``device``/``is_cuda``/``type``/``numpy``/``pin_memory``), rewrites
  ``device="cuda"`` to the CPU and tags the result, and performs the
  same-device check, where argument names are still meaningful.
- ``_DispatchMode`` (a ``TorchDispatchMode``) sees every aten op, including
  those run by autograd's backward and inside library code, and only
  *propagates* the tag: a fresh output is on cuda when an input was.  It does
  not check devices: torch's own Python code running under the function mode
  (which is suspended inside its handler) reads real CPU devices and would
  produce false alarms.

Everything that must be patched at module level (``torch.cuda.*``,
``torch.load``/``save`` location hooks, DataLoader pinning, DataParallel,
unsupported features) is listed in ``activate()``, which restores it all.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import os
import sys
import threading
import types
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional  # noqa: F401  (make sure F.* exist before patching)
import torch.serialization
import torch.utils.data
import torch.utils.data._utils.pin_memory as _pin_module
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

CUDA0 = "cuda:0"
_TAG = "_devfix_sim_cuda"
_ORIGIN = "_devfix_origin"
_DEVFIX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))

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


class Unsupported(BaseException):
    """A feature the simulation does not model.

    A ``BaseException`` so that a script's ``except Exception`` cannot swallow
    it and let an unverified script pass.
    """

    def __init__(self, feature: str):
        super().__init__(feature)
        self.feature = feature


@dataclass
class Event:
    """The first device error (or unsupported feature) seen during the run."""

    kind: str  # "device" | "unsupported"
    message: str
    operation: str = ""
    devices: dict = field(default_factory=dict)
    rule: str = ""
    detail: str = ""
    file: str | None = None
    line: int | None = None
    exc: BaseException | None = None
    callers: list = field(default_factory=list)  # outer user frames, innermost first: [(file, line)]


class State:
    """Per-run bookkeeping shared by the modes and patches."""

    def __init__(self, script: str, cpu_only_load: bool = False):
        self.script = os.path.abspath(script)
        self.user_dir = os.path.dirname(self.script)
        self.cpu_only_load = cpu_only_load
        self.tensors_on_device = 0
        self.device_used = False  # the parent "initialised CUDA"
        self.in_bad_fork = False
        self.first: Event | None = None
        self._user_cache: dict[str, bool] = {}
        self.local = threading.local()

    # -- where in the user's code are we? ------------------------------------
    def is_user_file(self, filename: str) -> bool:
        hit = self._user_cache.get(filename)
        if hit is None:
            path = os.path.abspath(filename)
            hit = (
                not filename.startswith("<")  # `<frozen runpy>`, `<string>`: not a file of the user's
                and path.startswith(self.user_dir + os.sep)
                and not path.startswith(_DEVFIX_DIR + os.sep)
                and not path.startswith(_TORCH_DIR + os.sep)
                and "site-packages" not in path
            )
            self._user_cache[filename] = hit
        return hit

    def user_frame(self, frame=None):
        """Innermost frame of the user's own code on the current stack."""
        f = frame or sys._getframe(1)
        while f is not None:
            if self.is_user_file(f.f_code.co_filename):
                return f
            f = f.f_back
        return None

    def user_callers(self, frame, limit: int = 3):
        """(file, line) of the user frames that called `frame`, innermost first.

        A mismatch inside `forward` is reported where it happens; the loop line that fed the
        CPU batch in is one of these callers, and often the line to change.
        """
        found = []
        f = frame.f_back if frame is not None else None
        while f is not None and len(found) < limit:
            if self.is_user_file(f.f_code.co_filename):
                found.append((f.f_code.co_filename, f.f_lineno))
            f = f.f_back
        return found

    def record(self, event: Event) -> None:
        if self.first is None:
            self.first = event


_STATE: State | None = None


# ---------------------------------------------------------------------------
# tags
# ---------------------------------------------------------------------------
def _storage(t):
    try:
        return t.untyped_storage()
    except Exception:  # sparse, nested, ... : never simulated
        return None


def is_sim(t) -> bool:
    s = _storage(t)
    return s is not None and getattr(s, _TAG, False)


def sim_device(t) -> str:
    if is_sim(t):
        return CUDA0
    return str(torch._C.TensorBase.device.__get__(t))


def _set_tag(t, on: bool) -> None:
    s = _storage(t)
    if s is None:
        return
    was = getattr(s, _TAG, False)
    if on and not was:
        setattr(s, _TAG, True)
        if _STATE is not None:
            _STATE.tensors_on_device += 1
    elif was and not on:
        setattr(s, _TAG, False)


def _tensors(obj):
    return [x for x in pytree.tree_leaves(obj) if isinstance(x, torch.Tensor)]


def _storage_ids(tensors):
    out = set()
    for t in tensors:
        s = _storage(t)
        if s is not None:
            out.add(id(s))
    return out


def _fresh_outputs(out, inputs):
    """Outputs that do not alias an input's storage (so their tag is ours to set)."""
    ins = _storage_ids(inputs)
    res = []
    for t in _tensors(out):
        s = _storage(t)
        if s is not None and id(s) not in ins:
            res.append(t)
    return res


def _norm_device(dev) -> str | None:
    """'cuda', 0, torch.device('cuda:0') -> 'cuda:0'; 'cpu' -> 'cpu'; other -> None."""
    if dev is None:
        return None
    if isinstance(dev, int) and not isinstance(dev, bool):
        dev = torch.device("cuda", dev)
    try:
        d = torch.device(dev)
    except Exception:
        return None
    if d.type == "cuda":
        if d.index not in (None, 0):
            raise Unsupported(f"multi-GPU ({d}): only one simulated device, cuda:0")
        return CUDA0
    if d.type == "cpu":
        return "cpu"
    return None


def _touch_device() -> None:
    """Called whenever the program puts something on the simulated device."""
    st = _STATE
    if st is None:
        return
    if st.in_bad_fork:
        _device_error(RuntimeError, FORK_MESSAGE, "cuda init in worker", {}, "DEV006")
    st.device_used = True


# ---------------------------------------------------------------------------
# device errors
# ---------------------------------------------------------------------------
def _device_error(exc_type, message, operation, devices, rule, detail="", frame=None):
    """Record the first device error with the user's file/line, then raise it
    with the exact text real CUDA PyTorch uses."""
    exc = exc_type(message)
    st = _STATE
    if st is not None:
        uf = st.user_frame(frame or sys._getframe(1))
        st.record(
            Event(
                "device", message, operation, devices, rule, detail,
                uf.f_code.co_filename if uf else None, uf.f_lineno if uf else None, exc,
                st.user_callers(uf),
            )
        )
    raise exc


def _in_optimizer_code() -> bool:
    f = sys._getframe(1)
    optim_dir = os.path.join(_TORCH_DIR, "optim") + os.sep
    while f is not None:
        if os.path.abspath(f.f_code.co_filename).startswith(optim_dir):
            return True
        f = f.f_back
    return False


def _shares_loop(path: str, a: int, b: int) -> bool:
    """True when lines a and b lie in one for/while loop of the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except Exception:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            lo, hi = node.lineno, node.end_lineno or node.lineno
            if lo <= a <= hi and lo <= b <= hi:
                return True
    return False


def _classify(cpu_t, cuda_t, meet_frame) -> tuple[str, str]:
    """Pick the rule that fixes a mismatch, from where the CPU tensor came from."""
    if _in_optimizer_code():
        return "DEV003", "the optimizer was built before the model was moved; its state stayed on the CPU"
    if isinstance(cpu_t, torch.nn.Parameter):
        return "DEV003", "the model's parameters are still on the CPU"
    origin = getattr(_storage(cpu_t), _ORIGIN, None)
    if origin is not None:
        ofile, oline, ofunc, in_module = origin
        where = f"{os.path.basename(ofile)}:{oline} in {ofunc}()"
        if in_module and ofunc == "__init__":
            return "DEV012", f"the CPU tensor is a plain module attribute created at {where}"
        if in_module:
            return "DEV007", f"the CPU tensor was created at {where} without device="
        if meet_frame is not None and os.path.abspath(ofile) == os.path.abspath(
            meet_frame.f_code.co_filename
        ) and _shares_loop(ofile, oline, meet_frame.f_lineno):
            return "DEV008", f"the CPU tensor was created in the loop at {where} without device="
    if isinstance(cuda_t, torch.nn.Parameter):
        return "DEV004", "the model is on cuda:0 but this input is on the CPU"
    return "DEV004", "this tensor was never moved to the device"


_ROLES = {
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
    _ROLES[_n] = ["input", "weight", "bias"]
_CONV = {n for n in _ROLES if n.startswith("conv")}
_RNN = {"lstm", "gru", "rnn_tanh", "rnn_relu"}


def _op_name(func) -> tuple[str, bool]:
    name = getattr(func, "__name__", str(func))
    qual = getattr(func, "__qualname__", "")
    is_method = qual.startswith(("TensorBase.", "Tensor."))
    return name, is_method


def _named_tensors(func, args, kwargs):
    """[(role, tensor)] in argument order, with readable role names."""
    name, is_method = _op_name(func)
    names = _ROLES.get(name)
    if names is None:
        names = ["self", "other"] if is_method else ["input", "other"]
        try:  # Python-level functions (F.cross_entropy...) have real names
            import inspect

            bound = inspect.signature(func).bind_partial(*args, **kwargs).arguments
            items = list(bound.items())
        except Exception:
            items = None
        if items is not None:
            return _flatten_named(items)
    items = [(names[i] if i < len(names) else f"arg{i}", a) for i, a in enumerate(args)]
    items += list(kwargs.items())
    return _flatten_named(items)


def _flatten_named(items):
    out = []
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
    torch.float32: "FloatTensor", torch.float64: "DoubleTensor", torch.float16: "HalfTensor",
    torch.bfloat16: "BFloat16Tensor", torch.int64: "LongTensor", torch.int32: "IntTensor",
    torch.int16: "ShortTensor", torch.int8: "CharTensor", torch.uint8: "ByteTensor",
    torch.bool: "BoolTensor", torch.complex64: "ComplexFloatTensor",
    torch.complex128: "ComplexDoubleTensor",
}


def _cuda_type(t, on_cuda: bool) -> str:
    """Legacy type name as real PyTorch prints it: torch[.cuda].FloatTensor."""
    name = _LEGACY.get(t.dtype, "Tensor")
    return f"torch.cuda.{name}" if on_cuda else f"torch.{name}"


def _host_arguments(name, args):
    """Arguments real CUDA wants on the host: the `batch_sizes` of a packed RNN call
    (`lstm(data, batch_sizes, hx, ...)`), which `pack_padded_sequence` keeps on the CPU."""
    if name in _RNN and len(args) > 1 and isinstance(args[1], torch.Tensor) and args[1].dtype == torch.int64:
        return (args[1],)
    return ()


def _check_same_device(func, args, kwargs) -> None:
    named = _named_tensors(func, args, kwargs)
    if len(named) < 2:
        return
    cuda = [(r, t) for r, t in named if is_sim(t)]
    if not cuda:
        return
    name, is_method = _op_name(func)
    host = _host_arguments(name, args)
    cpu = [
        (r, t) for r, t in named
        if not is_sim(t) and t.dim() > 0 and torch._C.TensorBase.device.__get__(t).type == "cpu"
        and not any(t is h for h in host)
    ]
    if not cpu:
        return
    (cr, ct), (pr, pt) = cuda[0], cpu[0]
    op = f"Tensor.{name}()" if is_method else f"{name}()"
    first_is_cpu = named.index((pr, pt)) < named.index((cr, ct))
    pair = [(pr, "cpu"), (cr, CUDA0)] if first_is_cpu else [(cr, CUDA0), (pr, "cpu")]
    devices = dict(pair)
    if name in _CONV and {pr, cr} <= {"input", "weight", "bias"} and "input" in (pr, cr):
        other = cr if pr == "input" else pr
        inp_cuda = cr == "input"
        inp_t = ct if inp_cuda else pt
        oth_t = pt if inp_cuda else ct
        msg = (
            f"Input type ({_cuda_type(inp_t, inp_cuda)}) and {other} type "
            f"({_cuda_type(oth_t, not inp_cuda)}) should be the same"
        )
        if not inp_cuda:
            msg += " or input should be a MKLDNN tensor and weight is a dense tensor"
    elif name in _RNN:
        roles = {pr: "cpu", cr: CUDA0}
        hid = next((r for r in roles if r.startswith("hx")), None)
        par = next((r for r in roles if r.startswith("params")), None)
        if "input" in roles and hid:
            msg = (
                "Input and hidden tensors are not at the same device, found input "
                f"tensor at {roles['input']} and hidden tensor at {roles[hid]}"
            )
        elif "input" in roles and par:
            msg = (
                "Input and parameter tensors are not at the same device, found input "
                f"tensor at {roles['input']} and parameter tensor at {roles[par]}"
            )
        else:
            msg = _generic(pair)
    else:
        msg = _generic(pair)
    meet = _STATE.user_frame(sys._getframe(1)) if _STATE else None
    rule, detail = _classify(pt, ct, meet)
    _device_error(RuntimeError, msg, op, devices, rule, detail, frame=sys._getframe(1))


def _generic(pair) -> str:
    # a call with any CUDA argument dispatches to the CUDA kernel, which names
    # its own device first whatever the argument order
    return (
        "Expected all tensors to be on the same device, but found at least two "
        f"devices, {CUDA0} and cpu!"
    )


# ---------------------------------------------------------------------------
# the device API, seen through the function mode
# ---------------------------------------------------------------------------
_TB = torch._C.TensorBase
_GETTERS = {
    "device": lambda t: torch.device(CUDA0) if is_sim(t) else _TB.device.__get__(t),
    "is_cuda": lambda t: is_sim(t) or _TB.is_cuda.__get__(t),
    "is_cpu": lambda t: (not is_sim(t)) and _TB.is_cpu.__get__(t),
}

# calls that may legally mix devices (copies, indexing with CPU indices, shape-only)
_NO_CHECK = {
    "to", "cuda", "cpu", "type", "type_as", "copy_", "__setitem__", "__getitem__",
    "index_put_", "index_put", "set_", "__repr__", "__format__", "__str__",
    "__reduce_ex__", "__deepcopy__", "__array__", "numpy", "pin_memory", "is_pinned",
    "new_tensor", "get_device", "size", "dim", "is_same_size", "backward",
    "__len__", "__iter__", "__hash__", "__bool__", "item", "tolist",
}


_OPERATORS = {
    f"__{p}{n}__"
    for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
              "and", "or", "xor", "lt", "le", "gt", "ge", "eq", "ne", "lshift", "rshift")
    for p in ("", "r", "i")
}


def _wants_check(name: str) -> bool:
    """Which calls get the same-device check: public compute functions,
    arithmetic operators and the optimizers' ``_foreach_*`` kernels; not
    torch-private helpers nor calls that may legally mix devices."""
    if name.startswith("__"):
        return name in _OPERATORS
    if name.startswith("_"):
        return name.startswith("_foreach")
    return name not in _NO_CHECK and not name.endswith("_as")


def _move(t, target: str, dtype=None, non_blocking=False, copy=False, memory_format=None):
    """Move ``t`` to ``target`` ('cpu'|'cuda:0') for real on the CPU, fix the tag."""
    cur = sim_device(t)
    if target == CUDA0:
        _touch_device()
    moving = cur != target
    kw = {"device": "cpu", "non_blocking": non_blocking, "copy": copy or moving}
    if dtype is not None:
        kw["dtype"] = dtype
    if memory_format is not None:
        kw["memory_format"] = memory_format
    out = _TB.to(t, **kw)
    if out is not t:
        _set_tag(out, target == CUDA0)
        origin = getattr(_storage(t), _ORIGIN, None)
        if origin is not None and target == "cpu":
            setattr(_storage(out), _ORIGIN, origin)
    return out


def _api_to(t, *args, **kwargs):
    """Tensor.to in all its forms: (device, dtype, non_blocking, copy), (dtype), (tensor)."""
    copy = kwargs.pop("copy", False)
    other = args[0] if args and isinstance(args[0], torch.Tensor) else kwargs.get("other")
    if isinstance(other, torch.Tensor):
        nb = args[1] if len(args) > 1 else kwargs.get("non_blocking", False)
        return _move(t, sim_device(other), other.dtype, nb, copy)
    args = list(args)
    if kwargs.get("device") is not None:
        dev = kwargs["device"]
        kwargs["device"] = "cpu"
    elif args and args[0] is not None and not isinstance(args[0], torch.dtype):
        dev = args[0]
        args[0] = "cpu"
    else:
        dev = None
    target = _norm_device(dev) if dev is not None else sim_device(t)
    if target is None:
        return None  # another device type (meta...): let torch handle it
    _, dtype, nb, mf = torch._C._nn._parse_to(*args, **kwargs)
    return _move(t, target, dtype, nb, copy, mf)


def _api_type(t, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return _cuda_type(t, is_sim(t))
    if isinstance(dtype, str):
        on_cuda = ".cuda." in dtype
        cls = getattr(torch, dtype.replace("torch.cuda.", "torch.").split(".")[-1])
        return _move(t, CUDA0 if on_cuda else "cpu", cls.dtype, non_blocking)
    if not isinstance(dtype, torch.dtype) and isinstance(getattr(dtype, "dtype", None), torch.dtype):
        # legacy tensor types: torch.cuda.FloatTensor, torch.LongTensor
        on_cuda = bool(getattr(dtype, "is_cuda", False))
        return _move(t, CUDA0 if on_cuda else "cpu", dtype.dtype, non_blocking)
    return _move(t, sim_device(t), dtype, non_blocking)


def _api_numpy(t, *a, **k):
    if is_sim(t):
        _device_error(
            TypeError,
            "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to "
            "copy the tensor to host memory first.",
            "Tensor.numpy()", {"self": CUDA0}, "DEV009",
            "a tensor on the device must be copied to the host first",
            frame=sys._getframe(2),
        )
    return None


def _pin_error(t, frame=None):
    _device_error(
        RuntimeError,
        f"cannot pin '{_cuda_type(t, True)}' only dense CPU tensors can be pinned",
        "pin_memory()", {"tensor": CUDA0}, "DEV005",
        "the data is already on the device; pin_memory=True only applies to CPU tensors",
        frame=frame or sys._getframe(2),
    )


def _factory_names():
    return {
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm",
        "arange", "eye", "linspace", "logspace", "tensor", "as_tensor",
        "from_numpy", "zeros_like", "ones_like", "empty_like", "full_like",
        "rand_like", "randn_like", "randint_like", "tril", "triu", "tril_indices",
        "triu_indices", "bernoulli", "normal", "multinomial",
    }


_FACTORIES = _factory_names()


class _FunctionMode(TorchFunctionMode):
    """Device API + same-device checks at the level the user wrote them."""

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        owner = getattr(func, "__self__", None)
        # property getters: x.device, x.is_cuda, x.is_cpu
        if name == "__get__" and owner is not None:
            getter = _GETTERS.get(getattr(owner, "__name__", ""))
            if getter is not None:
                return getter(args[0])
            return func(*args, **kwargs)
        if name == "__set__":
            return func(*args, **kwargs)
        _, is_method = _op_name(func)
        if is_method or name in ("__array__",):
            t = args[0] if args else None
            if name == "to":
                out = _api_to(t, *args[1:], **kwargs)
                if out is not None:
                    return out
            elif name == "cuda":
                dev = args[1] if len(args) > 1 else kwargs.get("device")
                if dev is not None:
                    _norm_device(dev)  # raises Unsupported for cuda:1
                return _move(t, CUDA0, None, kwargs.get("non_blocking", False),
                             memory_format=kwargs.get("memory_format"))
            elif name == "cpu":
                return _move(t, "cpu", memory_format=kwargs.get("memory_format"))
            elif name == "type":
                return _api_type(*args, **kwargs)
            elif name == "type_as":
                return _move(t, sim_device(args[1]), args[1].dtype)
            elif name in ("numpy", "__array__"):
                _api_numpy(t)
            elif name == "pin_memory":
                if is_sim(t):
                    _pin_error(t, frame=sys._getframe(1))
                return t  # a CPU-only build cannot pin; unpinned memory behaves the same
            elif name == "is_pinned":
                return False
            elif name == "get_device":
                return 0 if is_sim(t) else -1
            elif name == "__repr__" and is_sim(t):
                text = func(*args, **kwargs)
                if "device=" not in text and text.endswith(")"):
                    text = text[:-1] + f", device='{CUDA0}')"
                return text
        # explicit device= : create on the CPU, tag as the requested device
        target = None
        if "device" in kwargs and kwargs["device"] is not None:
            target = _norm_device(kwargs["device"])
            if target is not None:
                if target == CUDA0:
                    _touch_device()
                kwargs["device"] = "cpu"
        if _wants_check(name):
            _check_same_device(func, args, kwargs)
        out = func(*args, **kwargs)
        ins = _tensors((args, kwargs))
        fresh = _fresh_outputs(out, ins) if isinstance(out, (torch.Tensor, tuple, list)) else []
        if target is not None:
            for o in fresh:
                _set_tag(o, target == CUDA0)
        if fresh:
            self._note_origin(name, fresh, ins)
        return out

    @staticmethod
    def _note_origin(name, fresh, ins):
        """Remember where the user created a CPU tensor (to pick DEV007/8/12)."""
        origin = None
        for t in ins:
            origin = getattr(_storage(t), _ORIGIN, None)
            if origin is not None:
                break
        if origin is None and name in _FACTORIES and _STATE is not None:
            caller = sys._getframe(2)
            if _STATE.is_user_file(caller.f_code.co_filename):
                slf = caller.f_locals.get("self")
                origin = (
                    caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name,
                    isinstance(slf, torch.nn.Module),
                )
        if origin is not None:
            for o in fresh:
                s = _storage(o)
                if s is not None and not getattr(s, _TAG, False):
                    setattr(s, _ORIGIN, origin)


# Ops whose outputs real CUDA keeps partly on the host: (op name, indices of device outputs).
# `_pack_padded_sequence` returns (data, batch_sizes); batch_sizes always stays on the CPU.
_HOST_OUTPUTS = {"aten::_pack_padded_sequence": (0,)}


def _device_outputs(func, out):
    """The part of an op's outputs that lands on the device on real CUDA."""
    keep = _HOST_OUTPUTS.get(getattr(func, "name", lambda: "")())
    if keep is None or not isinstance(out, (tuple, list)):
        return out
    return tuple(out[i] for i in keep)


class _DispatchMode(TorchDispatchMode):
    """Propagates the tag through every aten op (incl. autograd's backward)."""

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        target = None
        if kwargs.get("device") is not None:
            target = _norm_device(kwargs["device"])
            if target == CUDA0:
                _touch_device()
                kwargs["device"] = torch.device("cpu")
        ins = _tensors((args, kwargs))
        if _STATE is not None and _STATE.in_bad_fork and any(is_sim(t) for t in ins):
            _device_error(RuntimeError, FORK_MESSAGE, str(func), {}, "DEV006")
        out = func(*args, **kwargs)
        want = (target == CUDA0) if target is not None else any(is_sim(t) for t in ins)
        if want:
            for o in _fresh_outputs(_device_outputs(func, out), ins):
                _set_tag(o, True)
        return out


# ---------------------------------------------------------------------------
# module-level patches
# ---------------------------------------------------------------------------
class _Patcher:
    def __init__(self):
        self._saved = []

    def set(self, obj, name, value):
        self._saved.append((obj, name, obj.__dict__.get(name, _MISSING) if isinstance(obj, type) else getattr(obj, name, _MISSING)))
        setattr(obj, name, value)

    def restore(self):
        for obj, name, old in reversed(self._saved):
            if old is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(obj, name)
            else:
                setattr(obj, name, old)
        self._saved.clear()


_MISSING = object()


def _unsupported(feature):
    def raiser(*a, **k):
        raise Unsupported(feature)

    return raiser


def _cuda_call(result=None):
    """A torch.cuda function that "works" (and initialises the device)."""

    def fn(*a, **k):
        _touch_device()
        return result

    return fn


class _IdleStream:
    """What ``torch.accelerator.current_stream()`` returns: never capturing."""

    def is_capturing(self):
        return False

    def synchronize(self):
        return None

    def query(self):
        return True


_NOT_CAPTURING = _IdleStream()


def _no_op(*a, **k):
    return None


def _set_device(dev=None):
    d = dev if isinstance(dev, (int, type(None))) else torch.device(dev).index
    if d not in (None, 0):
        raise Unsupported(f"torch.cuda.set_device({d}): multi-GPU")
    _touch_device()


def _pin_memory(data, device=None):
    """DataLoader pinning: CPU tensors pass (a CPU build cannot pin), device tensors fail."""
    for t in _tensors(data):
        if is_sim(t):
            _pin_error(t, frame=sys._getframe(1))
    return data


def _location_tag(orig):
    @functools.wraps(orig)
    def location_tag(storage):
        s = getattr(storage, "_untyped_storage", storage)
        if getattr(s, _TAG, False):
            return CUDA0
        return orig(storage)

    return location_tag


def _restore_location(orig):
    def default_restore_location(storage, location):
        if isinstance(location, str) and location.startswith("cuda"):
            _norm_device(location)  # cuda:1 -> Unsupported
            st = _STATE
            if st is not None and st.cpu_only_load and getattr(st.local, "no_map_location", False):
                _device_error(
                    RuntimeError, LOAD_MESSAGE, "torch.load()", {"checkpoint": CUDA0},
                    "DEV010", "the checkpoint holds CUDA tensors and no map_location was given",
                )
            s = getattr(storage, "_untyped_storage", storage)
            _touch_device()
            setattr(s, _TAG, True)
            if st is not None:
                st.tensors_on_device += 1
            return storage
        return orig(storage, location)

    return default_restore_location


def _load(orig):
    @functools.wraps(orig)
    def load(f, map_location=None, *args, **kwargs):
        st = _STATE
        prev = getattr(st.local, "no_map_location", False) if st else False
        if st:
            st.local.no_map_location = map_location is None
        try:
            return orig(f, map_location, *args, **kwargs)
        finally:
            if st:
                st.local.no_map_location = prev

    return load


def _dp_forward(self, *inputs, **kwargs):
    """DataParallel.forward for one device: same check and scatter as the real one."""
    if not self.device_ids:
        return self.module(*inputs, **kwargs)
    for t in itertools.chain(self.module.parameters(), self.module.buffers()):
        if not is_sim(t):
            _device_error(
                RuntimeError,
                "module must have its parameters and buffers on device cuda:0 "
                "(device_ids[0]) but found one of them on device: cpu",
                "DataParallel.forward()", {"module": "cpu", "device_ids[0]": CUDA0},
                "DEV003", "the wrapped module was moved off cuda:0",
            )

    def scatter(x):
        return _move(x, CUDA0) if isinstance(x, torch.Tensor) else x

    inputs = pytree.tree_map(scatter, inputs)
    kwargs = pytree.tree_map(scatter, kwargs)
    return self.module(*inputs, **kwargs)


def _pack_padded(original):
    """pack_padded_sequence refuses `lengths` on the GPU, as real CUDA does."""

    @functools.wraps(original)
    def pack_padded_sequence(input, lengths, *args, **kwargs):
        if isinstance(lengths, torch.Tensor) and is_sim(lengths):
            _device_error(
                RuntimeError,
                "'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor",
                "pack_padded_sequence()", {"lengths": CUDA0}, "DEV004",
                "the lengths of a packed sequence must stay on the CPU",
            )
        return original(input, lengths, *args, **kwargs)

    return pack_padded_sequence


def _pad_packed(original):
    """pad_packed_sequence as on real CUDA: the padded output follows the packed data.

    Its implementation builds the padded tensor with the host's options and fills it, which
    the function mode would read as a CPU tensor meeting CUDA indices. Run it with the
    function mode off (the dispatch mode still propagates tags), then place the output.
    """

    @functools.wraps(original)
    def pad_packed_sequence(sequence, *args, **kwargs):
        with torch.overrides._pop_mode_temporarily():
            padded, lengths = original(sequence, *args, **kwargs)
        if is_sim(sequence.data):
            _set_tag(padded, True)
        return padded, lengths

    return pad_packed_sequence


def _guarded_class(cls, feature, is_cuda):
    """Subclass that refuses construction when it would act on CUDA."""

    class Guard(cls):  # type: ignore[misc, valid-type]
        def __init__(self, *a, **k):
            if is_cuda(*a, **k):
                raise Unsupported(feature)
            super().__init__(*a, **k)

    Guard.__name__ = cls.__name__
    Guard.__qualname__ = cls.__qualname__
    return Guard


def _autocast_is_cuda(device_type=None, *a, enabled=True, **k):
    return device_type == "cuda" and bool(enabled)


def _scaler_is_cuda(device="cuda", *a, enabled=True, **k):
    return str(device).startswith("cuda") and bool(enabled)


@contextlib.contextmanager
def activate(state: State):
    """Install the simulated device for the duration of the block."""
    global _STATE
    p = _Patcher()
    cuda = torch.cuda
    props = types.SimpleNamespace(
        name="devfix simulated CUDA device", major=8, minor=0,
        total_memory=16 * 1024**3, multi_processor_count=108, is_integrated=False,
    )
    try:
        _STATE = state
        for name, value in {
            "is_available": lambda: True,
            "device_count": lambda: 1,
            "current_device": _cuda_call(0),
            "get_device_name": _cuda_call(props.name),
            "get_device_capability": _cuda_call((8, 0)),
            "get_device_properties": _cuda_call(props),
            "synchronize": _cuda_call(None),
            "manual_seed": _no_op,  # real torch queues these lazily: no init
            "manual_seed_all": _no_op,  # real torch queues these lazily: no init
            "seed": _no_op,  # real torch queues these lazily: no init
            "seed_all": _no_op,  # real torch queues these lazily: no init
            "empty_cache": lambda: None,
            "ipc_collect": lambda: None,
            "is_initialized": lambda: state.device_used and not state.in_bad_fork,
            "is_bf16_supported": lambda *a, **k: True,
            "_lazy_init": _touch_device,
            "set_device": _set_device,
            "Stream": _unsupported("torch.cuda.Stream (streams are not simulated)"),
            "Event": _unsupported("torch.cuda.Event (events are not simulated)"),
            "stream": _unsupported("torch.cuda.stream (streams are not simulated)"),
            "current_stream": _unsupported("torch.cuda.current_stream (streams are not simulated)"),
            "default_stream": _unsupported("torch.cuda.default_stream (streams are not simulated)"),
            "graph": _unsupported("torch.cuda.graph (CUDA graphs are not simulated)"),
            "CUDAGraph": _unsupported("torch.cuda.CUDAGraph (CUDA graphs are not simulated)"),
        }.items():
            p.set(cuda, name, value)
        for name in (
            "memory_allocated", "max_memory_allocated", "memory_reserved",
            "max_memory_reserved", "memory_stats", "memory_summary",
            "reset_peak_memory_stats", "mem_get_info", "set_per_process_memory_fraction",
            "memory_cached", "max_memory_cached",
        ):
            p.set(cuda, name, _unsupported(f"torch.cuda.{name} (memory is not simulated)"))
        acc = torch.accelerator
        p.set(acc, "is_available", lambda: True)
        p.set(acc, "device_count", lambda: 1)
        p.set(acc, "current_accelerator", lambda *a, **k: torch.device("cuda"))
        p.set(acc, "current_device_index", lambda: 0)
        p.set(acc, "set_device_index", lambda d=0, /: _set_device(d))
        p.set(acc, "synchronize", lambda *a: None)
        # torch's optimizers ask whether the current stream is capturing a graph
        p.set(acc, "current_stream", lambda *a: _NOT_CAPTURING)
        p.set(cuda, "is_current_stream_capturing", lambda: False)
        # unsupported features: refuse rather than pass unverified
        p.set(torch, "compile", _unsupported("torch.compile"))
        ac = _guarded_class(torch.amp.autocast_mode.autocast, 'torch.autocast(device_type="cuda") (AMP)', _autocast_is_cuda)
        p.set(torch, "autocast", ac)
        p.set(torch.amp, "autocast", ac)
        p.set(torch.cuda.amp, "autocast", _unsupported("torch.cuda.amp.autocast (AMP)"))
        p.set(torch.cuda.amp, "GradScaler", _unsupported("torch.cuda.amp.GradScaler (AMP)"))
        p.set(torch.amp, "GradScaler", _guarded_class(torch.amp.GradScaler, "torch.amp.GradScaler on cuda (AMP)", _scaler_is_cuda))
        import torch.utils.cpp_extension as cpp_ext

        p.set(cpp_ext, "load_inline", _unsupported("torch.utils.cpp_extension.load_inline (custom CUDA kernels)"))
        p.set(cpp_ext, "load", _unsupported("torch.utils.cpp_extension.load (custom CUDA kernels)"))
        import torch.distributed as dist

        if hasattr(dist, "init_process_group"):
            p.set(dist, "init_process_group", _unsupported("torch.distributed (multi-process / multi-GPU)"))
        # serialization, loaders, DataParallel
        p.set(torch.serialization, "location_tag", _location_tag(torch.serialization.location_tag))
        p.set(torch.serialization, "default_restore_location",
              _restore_location(torch.serialization.default_restore_location))
        p.set(torch, "load", _load(torch.load))
        p.set(torch.serialization, "load", torch.load)
        p.set(_pin_module, "pin_memory", _pin_memory)
        # the RNN modules ask cuDNN about "cuda" weights; there is no cuDNN here
        p.set(torch.backends.cudnn, "is_acceptable", lambda t: False)
        p.set(torch.nn.DataParallel, "forward", _dp_forward)
        p.set(torch.nn.utils.rnn, "pad_packed_sequence", _pad_packed(torch.nn.utils.rnn.pad_packed_sequence))
        p.set(torch.nn.utils.rnn, "pack_padded_sequence", _pack_padded(torch.nn.utils.rnn.pack_padded_sequence))
        p.set(torch.nn.parallel.data_parallel, "_check_balance", lambda ids: None)

        fmode, dmode = _FunctionMode(), _DispatchMode()
        with dmode, fmode:
            yield state
    finally:
        p.restore()
        _STATE = None


def _after_fork_in_child():
    st = _STATE
    if st is not None and st.device_used:
        st.in_bad_fork = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def describe_tensor(t: Any) -> str:
    """Short text for debugging: device as the script sees it."""
    return f"{tuple(t.shape)} on {sim_device(t)}"

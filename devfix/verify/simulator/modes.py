"""The two modes: the device API and the checks (function mode), the tag's
propagation through every aten op (dispatch mode).

- ``FunctionMode`` (a ``TorchFunctionMode``) sees every public call with its
  user-level arguments: ``F.linear(input, weight)``, ``x.to(device)``,
  ``x.device``, ``x.numpy()``, ``t[idx]``.  Its ``__torch_function__`` looks the
  called function up in ``HANDLERS``: the device API
  (``to``/``cuda``/``cpu``/``device``/``is_cuda``/``type``/``numpy``/``pin_memory``...)
  and the calls with device rules of their own have a handler; everything else
  takes ``default``: ``device="cuda"`` is rewritten to the CPU and the result
  tagged, and the same-device check runs where argument names still mean
  something.
- ``DispatchMode`` (a ``TorchDispatchMode``) sees every aten op, including those
  run by autograd's backward and inside library code, and only *propagates* the
  tag: a fresh output is on the device of its inputs.  It does not check
  devices: torch's own Python code running under the function mode (which is
  suspended inside its handler) reads real CPU devices and would produce false
  alarms.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Collection, Iterator
from types import FrameType
from typing import Any, NoReturn

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from devfix.verify.simulator import checks
from devfix.verify.simulator import state as _state
from devfix.verify.simulator.checks import cuda_device, device_error, norm_device, touch_device
from devfix.verify.simulator.tags import (
    CPU,
    Origin,
    cuda,
    first_index,
    fresh_outputs,
    index_of,
    is_sim,
    note_moved_copy,
    origin,
    pass_on_moved_copy,
    set_index,
    set_made_by_factory,
    set_origin,
    sim_device,
    sim_index,
    storage,
    tensors,
)

_TB = torch._C.TensorBase

# a handler of the function mode: handler(the called function, its args, its kwargs, the caller's frame)
Handler = Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any], FrameType], Any]


def _getter(name: str) -> Callable[..., Any]:
    """The getter of a Tensor property (``x.device``, ``x.is_cuda``), as the function mode
    receives it when the property is read."""
    getter: Callable[..., Any] = _TB.__dict__[name].__get__
    return getter


# ---------------------------------------------------------------------------
# moving tensors between the host and the simulated devices
# ---------------------------------------------------------------------------
def _init_attribute(where_made: Origin | None) -> bool:
    """An origin in a module's __init__: the tensor is (or feeds) a plain attribute."""
    return where_made is not None and where_made[3] and where_made[2] == "__init__"


class _Transfer(torch.autograd.Function):
    """A differentiable copy to another device whose gradient is copied back to the
    source device, as a real cross-device copy's is. A plain ``_to_copy`` would
    not do: its backward asks for the source's real device, always the CPU here."""

    @staticmethod
    def forward(ctx: Any, t: torch.Tensor, index: int | None, dtype: torch.dtype | None) -> torch.Tensor:
        ctx.source, ctx.source_dtype = sim_index(t), t.dtype
        with no_function_mode():
            out = _TB.to(t, dtype=dtype or t.dtype, copy=True)
        set_index(out, index)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        with no_function_mode():
            g = _TB.to(grad, dtype=ctx.source_dtype, copy=True)
        set_index(g, ctx.source)
        return g, None, None


def move(
    t: torch.Tensor,
    target: str,
    dtype: torch.dtype | None = None,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: torch.memory_format | None = None,
) -> torch.Tensor:
    """Move ``t`` to ``target`` ('cpu' | 'cuda:N') for real on the CPU, fix the tag."""
    cur = sim_device(t)
    if target != CPU:
        touch_device()
    moving = cur != target
    index = index_of(target)
    converts = dtype is not None and dtype != t.dtype
    if t.requires_grad and torch.is_grad_enabled() and (moving or (cur != CPU and (copy or converts))):
        out: torch.Tensor = _Transfer.apply(t, index, dtype)  # type: ignore[no-untyped-call]  # torch's, untyped
        if memory_format is not None:
            with no_function_mode():
                out = _TB.to(out, memory_format=memory_format)
    else:
        kw: dict[str, Any] = {"device": "cpu", "non_blocking": non_blocking, "copy": copy or moving}
        if dtype is not None:
            kw["dtype"] = dtype
        if memory_format is not None:
            kw["memory_format"] = memory_format
        with no_function_mode():
            out = _TB.to(t, **kw)
    if out is not t:
        if cur == CPU and target != CPU:
            note_moved_copy(t, out)
        set_index(out, index)
        where_made = origin(t)
        if where_made is not None and (target == CPU or _init_attribute(where_made)):
            set_origin(out, where_made)
    return out


def api_to(t: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor | None:
    """Tensor.to in all its forms: (device, dtype, non_blocking, copy), (dtype), (tensor)."""
    copy = kwargs.pop("copy", False)
    other = args[0] if args and isinstance(args[0], torch.Tensor) else kwargs.get("other")
    if isinstance(other, torch.Tensor):
        nb = args[1] if len(args) > 1 else kwargs.get("non_blocking", False)
        return move(t, sim_device(other), other.dtype, nb, copy)
    rest = list(args)
    if kwargs.get("device") is not None:
        dev = kwargs["device"]
        kwargs["device"] = "cpu"
    elif rest and rest[0] is not None and not isinstance(rest[0], torch.dtype):
        dev = rest[0]
        rest[0] = "cpu"
    else:
        dev = None
    target = norm_device(dev) if dev is not None else sim_device(t)
    if target is None:
        return None  # another device type (meta...): let torch handle it
    _, dtype, nb, mf = torch._C._nn._parse_to(*rest, **kwargs)
    return move(t, target, dtype, nb, copy, mf)


def api_type(t: torch.Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> torch.Tensor | str:
    if dtype is None:
        return checks.legacy_type(t, is_sim(t))
    if isinstance(dtype, str):
        on_cuda = ".cuda." in dtype
        cls = getattr(torch, dtype.replace("torch.cuda.", "torch.").split(".")[-1])
        return move(t, cuda_device() if on_cuda else CPU, cls.dtype, non_blocking)
    if not isinstance(dtype, torch.dtype) and isinstance(getattr(dtype, "dtype", None), torch.dtype):
        # legacy tensor types: torch.cuda.FloatTensor, torch.LongTensor
        on_cuda = bool(getattr(dtype, "is_cuda", False))
        return move(t, cuda_device() if on_cuda else CPU, dtype.dtype, non_blocking)
    return move(t, sim_device(t), dtype, non_blocking)


def pin_error(t: torch.Tensor, frame: FrameType | None = None) -> NoReturn:
    device_error(
        RuntimeError,
        f"cannot pin '{checks.legacy_type(t, True)}' only dense CPU tensors can be pinned",
        "pin_memory()",
        {"tensor": sim_device(t)},
        "DEV005",
        "the data is already on the device; pin_memory=True only applies to CPU tensors",
        frame=frame or sys._getframe(2),
    )


# ---------------------------------------------------------------------------
# which calls get the same-device check
# ---------------------------------------------------------------------------
# calls that may legally mix devices (copies, indexing with CPU indices, shape-only)
NO_CHECK = {
    "to",
    "cuda",
    "cpu",
    "type",
    "type_as",
    "copy_",
    "__setitem__",
    "__getitem__",
    "index_put_",
    "index_put",
    "set_",
    "__repr__",
    "__format__",
    "__str__",
    "__reduce_ex__",
    "__deepcopy__",
    "__array__",
    "numpy",
    "pin_memory",
    "is_pinned",
    "new_tensor",
    "get_device",
    "size",
    "dim",
    "is_same_size",
    "backward",
    "__len__",
    "__iter__",
    "__hash__",
    "__bool__",
    "item",
    "tolist",
}

OPERATORS = {
    f"__{p}{n}__"
    for n in (
        "add",
        "sub",
        "mul",
        "truediv",
        "floordiv",
        "mod",
        "pow",
        "matmul",
        "and",
        "or",
        "xor",
        "lt",
        "le",
        "gt",
        "ge",
        "eq",
        "ne",
        "lshift",
        "rshift",
    )
    for p in ("", "r", "i")
}


def wants_check(name: str) -> bool:
    """Which calls get the same-device check: public compute functions,
    arithmetic operators and the optimizers' ``_foreach_*`` kernels; not
    torch-private helpers nor calls that may legally mix devices."""
    if name.startswith("__"):
        return name in OPERATORS
    if name.startswith("_"):
        return name.startswith("_foreach")
    return name not in NO_CHECK and not name.endswith("_as")


FACTORIES = {
    "zeros",
    "ones",
    "empty",
    "full",
    "rand",
    "randn",
    "randint",
    "randperm",
    "arange",
    "eye",
    "linspace",
    "logspace",
    "tensor",
    "as_tensor",
    "from_numpy",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "rand_like",
    "randn_like",
    "randint_like",
    "tril",
    "triu",
    "tril_indices",
    "triu_indices",
    "bernoulli",
    "normal",
    "multinomial",
}


# ---------------------------------------------------------------------------
# the function mode: a table from the called function to its handler
# ---------------------------------------------------------------------------
HANDLERS: dict[Callable[..., Any], Handler] = {}


def handles(*funcs: Callable[..., Any]) -> Callable[[Handler], Handler]:
    """Register the decorated ``handler(func, args, kwargs, caller)`` for `funcs`."""

    def register(handler: Handler) -> Handler:
        for f in funcs:
            HANDLERS[f] = handler
        return handler

    return register


def default(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    """Any other call: an explicit ``device=`` creates on the CPU and tags the
    result; compute calls get the same-device check; results remember where the
    user created them (to pick DEV007/8/12 later)."""
    name: str = getattr(func, "__name__", "")
    target = None
    if kwargs.get("device") is not None:
        target = norm_device(kwargs["device"])
        if target is not None:
            if target != CPU:
                touch_device()
            kwargs["device"] = "cpu"
    if wants_check(name):
        checks.check_same_device(func, args, kwargs, caller)
    out = func(*args, **kwargs)
    if isinstance(out, (torch.Tensor, tuple, list)):
        ins = tensors((args, kwargs))
        fresh = fresh_outputs(out, ins)
        if fresh:
            if target is not None:
                for o in fresh:
                    set_index(o, index_of(target))
            _note_origin(name, fresh, ins, caller)
    return out


def from_numpy(original: Callable[[Any], torch.Tensor]) -> Callable[[Any], torch.Tensor]:
    """`torch.from_numpy`, which no function mode sees (its argument is no tensor): the tensor
    remembers where the user made it, as every other factory's does (DEV007 in a module's
    method, DEV004 in a loop)."""

    def made(array: Any) -> torch.Tensor:
        out = original(array)
        _note_origin("from_numpy", [out], [], sys._getframe(1))
        return out

    return made


def _note_origin(name: str, fresh: list[torch.Tensor], ins: list[torch.Tensor], caller: FrameType) -> None:
    """Remember where the user created a CPU tensor (to pick DEV007/8/12), and where
    a module's __init__ created a device tensor (a plain attribute that DataParallel
    does not copy to its replicas: DEV012 on more than one GPU)."""
    pass_on_moved_copy(ins, [o for o in fresh if not is_sim(o)])
    where_made: Origin | None = None
    for t in ins:
        where_made = origin(t)
        if where_made is not None:
            break
    made_here = False
    st = _state.current()
    if where_made is None and name in FACTORIES and st is not None:
        if st.is_user_file(caller.f_code.co_filename):
            where_made = (
                caller.f_code.co_filename,
                caller.f_lineno,
                caller.f_code.co_name,
                _in_a_module(caller, st),
            )
            made_here = True
    if where_made is not None:
        keep_on_device = _init_attribute(where_made) and made_here
        for o in fresh:
            if keep_on_device or not is_sim(o):
                set_origin(o, where_made)
                if made_here:
                    set_made_by_factory(o)


def _in_a_module(caller: FrameType, st: _state.State) -> bool:
    """The tensor is made while a module of the user's runs: in one of its methods, or in a
    helper one of them calls (`make_mask(n)` from `forward`): DEV007's case, not DEV004's. The
    nearest user frame that has a `self` decides; `__init__` counts only as the maker itself."""
    frame: FrameType | None = caller
    depth = 0
    while frame is not None and depth < 8:
        if st.is_user_file(frame.f_code.co_filename):
            slf = frame.f_locals.get("self")
            if slf is not None:
                return isinstance(slf, torch.nn.Module) and (frame is caller or frame.f_code.co_name != "__init__")
        frame = frame.f_back
        depth += 1
    return False


SPARSE_FACTORIES = tuple(
    getattr(torch, name)
    for name in (
        "sparse_coo_tensor",
        "sparse_csr_tensor",
        "sparse_csc_tensor",
        "sparse_bsr_tensor",
        "sparse_bsc_tensor",
        "sparse_compressed_tensor",
    )
    if hasattr(torch, name)
)


@handles(*SPARSE_FACTORIES)
def _sparse(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    """A sparse tensor has no storage to tag: one built from GPU tensors (or for a GPU)
    cannot be simulated, and treating it as a CPU tensor would report a device bug that a
    real GPU would not have. Say so instead."""
    target = norm_device(kwargs["device"]) if kwargs.get("device") is not None else None
    if target not in (None, CPU) or any(is_sim(t) for t in tensors((args, kwargs))):
        raise _state.Unsupported(f"torch.{func.__name__} on the GPU (sparse tensors are not simulated)")
    return default(func, args, kwargs, caller)


@handles(_getter("device"))
def _get_device(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    i = sim_index(args[0])
    return torch.device("cuda", i) if i is not None else func(*args)


@handles(_getter("is_cuda"))
def _get_is_cuda(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    return is_sim(args[0]) or func(*args)


@handles(_getter("is_cpu"))
def _get_is_cpu(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    return (not is_sim(args[0])) and func(*args)


@handles(_TB.to)
def _to(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    out = api_to(*args, **kwargs)
    return out if out is not None else default(func, args, kwargs, caller)


@handles(torch._C._nn._parse_to)
def _parse_to(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    """Parsing `.to()`'s arguments places nothing: `nn.Module.to(device=device)` must see the
    device it was given, not the CPU that `default` puts in a `device=` keyword."""
    return func(*args, **kwargs)


@handles(_TB.cuda)
def _cuda(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    dev = args[1] if len(args) > 1 else kwargs.get("device")
    target = norm_device(dev) if dev is not None else cuda_device()
    if target is None:
        return default(func, args, kwargs, caller)  # not a device the simulation places: torch says why
    return move(args[0], target, None, kwargs.get("non_blocking", False), memory_format=kwargs.get("memory_format"))


@handles(_TB.cpu)
def _cpu(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    return move(args[0], CPU, memory_format=kwargs.get("memory_format"))


@handles(_TB.type)
def _type(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    return api_type(*args, **kwargs)


@handles(_TB.type_as)
def _type_as(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    return move(args[0], sim_device(args[1]), args[1].dtype)


@handles(_TB.numpy, torch.Tensor.__array__)
def _numpy(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    t = args[0]
    if is_sim(t):
        device_error(
            TypeError,
            f"can't convert {sim_device(t)} device type tensor to numpy. Use Tensor.cpu() to "
            "copy the tensor to host memory first.",
            "Tensor.numpy()",
            {"self": sim_device(t)},
            "DEV009",
            "a tensor on the device must be copied to the host first",
            frame=caller,
        )
    return default(func, args, kwargs, caller)


@handles(_TB.pin_memory)
def _pin_memory(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    if is_sim(args[0]):
        pin_error(args[0], frame=caller)
    return args[0]  # a CPU-only build cannot pin; unpinned memory behaves the same


@handles(_TB.is_pinned)
def _is_pinned(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    return False


@handles(_TB.get_device)
def _get_device_index(
    func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType
) -> Any:
    i = sim_index(args[0])
    return -1 if i is None else i


@handles(torch.Tensor.__repr__)
def _repr(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    t = args[0]
    if not is_sim(t):
        return default(func, args, kwargs, caller)
    text = func(*args, **kwargs)
    if "device=" not in text and text.endswith(")"):
        text = text[:-1] + f", device='{sim_device(t)}')"
    return text


class FunctionMode(TorchFunctionMode):
    """Device API + same-device checks at the level the user wrote them."""

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types_: Collection[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs or {})
        handler = HANDLERS.get(func)
        if handler is not None:
            return handler(func, args, kwargs, sys._getframe(1))
        if getattr(func, "__name__", "") in ("__get__", "__set__"):  # other properties
            return func(*args, **kwargs)
        return default(func, args, kwargs, sys._getframe(1))


# ---------------------------------------------------------------------------
# the dispatch mode: propagate the tag through every aten op
# ---------------------------------------------------------------------------
# Ops whose outputs real CUDA keeps partly on the host: (op name, indices of device outputs).
# `_pack_padded_sequence` returns (data, batch_sizes); batch_sizes always stays on the CPU.
HOST_OUTPUTS = {"aten::_pack_padded_sequence": (0,)}


def _device_outputs(func: object, out: object) -> object:
    """The part of an op's outputs that lands on the device on real CUDA."""
    keep = HOST_OUTPUTS.get(getattr(func, "name", lambda: "")())
    if keep is None or not isinstance(out, (tuple, list)):
        return out
    return tuple(out[i] for i in keep)


_TO_COPY = torch.ops.aten._to_copy.default


class DispatchMode(TorchDispatchMode):  # type: ignore[no-untyped-call]  # its __init_subclass__ is untyped
    """Propagates the tag through every aten op (incl. autograd's backward)."""

    def __torch_dispatch__(
        self,
        func: Callable[..., Any],
        types_: Collection[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs or {})
        target = None
        if kwargs.get("device") is not None:
            target = norm_device(kwargs["device"])
            if target is not None and target != CPU:
                touch_device()
                kwargs["device"] = torch.device("cpu")
        ins = tensors((args, kwargs))
        st = _state.current()
        if st is not None and st.in_bad_fork and any(is_sim(t) for t in ins):
            device_error(RuntimeError, checks.FORK_MESSAGE, str(func), {}, "DEV006")
        out = func(*args, **kwargs)
        if target is None or (target == CPU and func is _TO_COPY and torch._C._current_graph_task_id() != -1):
            # no device asked for; or the backward of a dtype cast, which asks for the
            # source's real device (the CPU): the result stays where its input is
            index = first_index(ins)
        else:
            index = index_of(target)
        if index is not None:
            for o in fresh_outputs(_device_outputs(func, out), ins):
                set_index(o, index)
        return out


@contextlib.contextmanager
def no_function_mode() -> Iterator[None]:
    """Run torch code as library code does inside a handler: the function mode off
    (the dispatch mode still propagates tags). A no-op where it is already off."""
    if torch._C._len_torch_function_stack() == 0:
        yield
        return
    with torch.overrides._pop_mode_temporarily():
        yield


__all__ = ["HANDLERS", "DispatchMode", "FunctionMode", "cuda", "move", "storage"]

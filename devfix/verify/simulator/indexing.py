"""Indexing across devices: ``t[idx]``, ``t[idx] = v``, ``index_select``,
``gather``, ``scatter``, ``take`` and ``embedding``, with real CUDA's rules.

The rules are not symmetric and differ per operation; each handler says which
piece of PyTorch decides (docs/verify.md has the table):

- ``t[idx]`` runs ``aten::index``, whose meta function allows index tensors on
  the CPU or on ``t``'s device and raises otherwise
  (``check_indices_on_cpu_or_selfdevice``): a CUDA tensor may be indexed with
  CPU indices, a CPU tensor may not be indexed with CUDA indices. A 0-dim
  integer (or bool) index never reaches it: Python indexing reads it with
  ``.item()`` and selects.
- ``t[idx] = v`` runs ``index_put_``, which moves the indices to ``t``'s device
  itself; a ``v`` of more than one element on another device fails in its
  TensorIterator (a 0-dim ``v`` is moved, a one-element CPU ``v`` under a mask
  on ``t``'s device becomes ``masked_fill_``).
- ``index_select``, ``gather``, ``scatter*`` and ``take`` have no device rule
  of their own: the CUDA kernel's generated wrapper checks that every tensor
  argument is on the first argument's device, 0-dim ones included, and names
  the argument and the wrapper (``wrapper_CUDA__index_select``...).
- ``embedding`` is ``weight.index_select(0, indices)`` (after
  ``embedding_renorm_`` when ``max_norm`` is given), so it fails like
  ``index_select`` with the weight as ``self``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any, NoReturn

import torch

from devfix.verify.simulator import state as _state
from devfix.verify.simulator.checks import classify, classify_cross_gpu, device_error, generic_message
from devfix.verify.simulator.modes import Handler, default, handles
from devfix.verify.simulator.tags import CPU, is_sim, sim_device

_TB = torch._C.TensorBase

Named = tuple[str, torch.Tensor, str]  # a tensor argument: (role, tensor, device)


def index_message(self_device: str) -> str:
    return f"indices should be either on cpu or on the same device as the indexed tensor ({self_device})"


def wrapper_message(arg: str, arg_device: str, common: str, method: str) -> str:
    """The text of the device check generated for CUDA kernels (c10::impl::
    common_device_check_failure, PyTorch 2.13)."""
    return (
        f"Expected all tensors to be on the same device, but got {arg} is on {arg_device}, "
        f"different from other tensors on {common} (when checking argument in method {method})"
    )


def _mismatch(
    op: str,
    message: str,
    named: list[Named],
    bad_pos: int,
    caller: FrameType,
    labels: dict[str, str] | None = None,
) -> NoReturn:
    """Report `named[bad_pos]` against the first tensor of `named` (the call's device);
    `labels` renames kernel arguments for the report (embedding's self is its weight)."""
    (r0, t0, d0), (r1, t1, d1) = named[0], named[bad_pos]
    if labels:
        r0, r1 = labels.get(r0, r0), labels.get(r1, r1)
    st = _state.current()
    meet = st.user_frame(caller) if st is not None else None
    if d0 == CPU:
        rule, detail = classify(t0, t1, meet)
    elif d1 == CPU:
        rule, detail = classify(t1, t0, meet)
    else:
        rule, detail = classify_cross_gpu(t0, d0, t1, d1)
    device_error(RuntimeError, message, op, {r0: d0, r1: d1}, rule, detail, frame=caller)


def _placed(pairs: Iterable[tuple[str, object]]) -> list[Named] | None:
    """[(role, tensor, device)] of the tensors in `pairs`; None when one of them is on a
    device type the simulation leaves to torch (meta...)."""
    out: list[Named] = []
    for role, t in pairs:
        if not isinstance(t, torch.Tensor):
            continue
        dev = sim_device(t)
        if dev != CPU and not dev.startswith("cuda:"):
            return None
        out.append((role, t, dev))
    return out


def check_kernel_arguments(
    method: str,
    op: str,
    pairs: Iterable[tuple[str, object]],
    caller: FrameType,
    labels: dict[str, str] | None = None,
) -> None:
    """The CUDA wrapper's check: every tensor argument on the first one's device."""
    named = _placed(pairs)
    if not named or not any(is_sim(t) for _, t, _ in named):
        return  # all on the host: the CPU kernel has no such check
    common = named[0][2]
    for pos, (role, _, dev) in enumerate(named):
        if dev != common:
            _mismatch(op, wrapper_message(role, dev, common, method), named, pos, caller, labels)


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], pos: int, *names: str) -> Any:
    if len(args) > pos:
        return args[pos]
    for n in names:
        if n in kwargs:
            return kwargs[n]
    return None


# ---------------------------------------------------------------------------
# t[idx] and t[idx] = v
# ---------------------------------------------------------------------------
def _index_items(index: object) -> tuple[Any, ...]:
    """The pieces of an index: a tuple's items; a list holding tensors is read as a
    tuple (NumPy's legacy rule, as torch does); anything else is one piece."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and any(isinstance(i, torch.Tensor) for i in index):
        return tuple(index)
    return (index,)


def _read_as_int(t: torch.Tensor) -> bool:
    """A 0-dim integer or bool index: Python indexing reads it with .item()."""
    return t.dim() == 0 and not (t.is_floating_point() or t.is_complex())


@handles(_TB.__getitem__)
def _getitem(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    t, index = args[0], args[1]
    indices = [i for i in _index_items(index) if isinstance(i, torch.Tensor) and not _read_as_int(i)]
    if indices:
        named = _placed([("self", t)] + [("indices", i) for i in indices])
        if named and any(is_sim(x) for _, x, _ in named):
            sdev = named[0][2]
            for pos, (_, _, dev) in enumerate(named[1:], 1):
                if dev != CPU and dev != sdev:
                    _mismatch("Tensor.__getitem__()", index_message(sdev), named, pos, caller)
    return default(func, args, kwargs, caller)


def _is_mask(i: object) -> bool:
    return isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)


@handles(_TB.__setitem__)
def _setitem(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    t, index, value = args[0], args[1], args[2]
    items = _index_items(index)
    tensor_indices = [i for i in items if isinstance(i, torch.Tensor) and not _read_as_int(i)]
    advanced = tensor_indices or any(isinstance(i, list) for i in items)
    if advanced and isinstance(value, torch.Tensor) and value.dim() > 0:
        named = _placed([("self", t), ("value", value)])
        if named and named[0][2] != named[1][2] and (is_sim(t) or is_sim(value)):
            to_masked_fill = (
                value.numel() == 1
                and not is_sim(value)
                and len(tensor_indices) == 1
                and _is_mask(tensor_indices[0])
                and sim_device(tensor_indices[0]) == named[0][2]
            )
            if not to_masked_fill:
                # index_put_'s TensorIterator: its device is the first non-CPU operand
                first = 0 if named[0][2] != CPU else 1
                ordered = [named[first], named[1 - first]]
                _mismatch("Tensor.__setitem__()", generic_message(ordered[0][2], ordered[1][2]), ordered, 1, caller)
    return default(func, args, kwargs, caller)


# ---------------------------------------------------------------------------
# index_select, gather, scatter, take, embedding
# ---------------------------------------------------------------------------
@handles(torch.index_select, _TB.index_select)
def _index_select(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    out = kwargs.get("out")
    pairs = ([("out", out)] if out is not None else []) + [
        ("self", _arg(args, kwargs, 0, "input", "self")),
        ("index", _arg(args, kwargs, 2, "index")),
    ]
    method = "wrapper_CUDA_out_index_select_out" if out is not None else "wrapper_CUDA__index_select"
    check_kernel_arguments(method, "index_select()", pairs, caller)
    return default(func, args, kwargs, caller)


@handles(torch.gather, _TB.gather)
def _gather(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    pairs = [("self", _arg(args, kwargs, 0, "input", "self")), ("index", _arg(args, kwargs, 2, "index"))]
    check_kernel_arguments("wrapper_CUDA_gather", "gather()", pairs, caller)
    return default(func, args, kwargs, caller)


@handles(torch.take, _TB.take)
def _take(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    pairs = [("self", _arg(args, kwargs, 0, "input", "self")), ("index", _arg(args, kwargs, 1, "index"))]
    check_kernel_arguments("wrapper_CUDA__take", "take()", pairs, caller)
    return default(func, args, kwargs, caller)


def _scatter_handler(base: str, overloads: Callable[[bool, bool], str]) -> Handler:
    """`overloads(src_is_tensor, reduce_given)` names the overload the Python binding picks."""

    def handler(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
        src = _arg(args, kwargs, 3, "src", "value")
        name = f"{base}_" if func.__name__.endswith("_") else base
        overload = overloads(isinstance(src, torch.Tensor), kwargs.get("reduce") is not None)
        method = f"wrapper_CUDA_{name}_{overload}" if overload else f"wrapper_CUDA_{name}"
        pairs = [("self", _arg(args, kwargs, 0, "input", "self")), ("index", _arg(args, kwargs, 2, "index"))]
        if isinstance(src, torch.Tensor):
            pairs.append(("src", src))
        check_kernel_arguments(method, f"{func.__name__}()", pairs, caller)
        return default(func, args, kwargs, caller)

    return handler


def _scatter_overload(src_is_tensor: bool, reduce_given: bool) -> str:
    if reduce_given:
        return "reduce" if src_is_tensor else "value_reduce"
    return "src" if src_is_tensor else "value"


handles(torch.scatter, _TB.scatter, _TB.scatter_)(_scatter_handler("scatter", _scatter_overload))
handles(torch.scatter_add, _TB.scatter_add, _TB.scatter_add_)(_scatter_handler("scatter_add", lambda s, r: ""))
handles(torch.scatter_reduce, _TB.scatter_reduce, _TB.scatter_reduce_)(
    _scatter_handler("scatter_reduce", lambda s, r: "two")
)


_EMBEDDING_LABELS: dict[str, str] = {"self": "weight", "index": "input", "indices": "input"}


def _check_embedding(weight: object, indices: object, max_norm: object, caller: FrameType) -> None:
    if max_norm is not None:
        check_kernel_arguments(
            "wrapper_CUDA__embedding_renorm_",
            "embedding()",
            [("self", weight), ("indices", indices)],
            caller,
            _EMBEDDING_LABELS,
        )
    check_kernel_arguments(
        "wrapper_CUDA__index_select", "embedding()", [("self", weight), ("index", indices)], caller, _EMBEDDING_LABELS
    )


@handles(torch.nn.functional.embedding)
def _embedding(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    _check_embedding(
        _arg(args, kwargs, 1, "weight"), _arg(args, kwargs, 0, "input"), _arg(args, kwargs, 3, "max_norm"), caller
    )
    return default(func, args, kwargs, caller)


@handles(torch.embedding)
def _aten_embedding(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], caller: FrameType) -> Any:
    _check_embedding(_arg(args, kwargs, 0, "weight"), _arg(args, kwargs, 1, "indices"), None, caller)
    return default(func, args, kwargs, caller)

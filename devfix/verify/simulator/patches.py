"""Everything patched at module level for the run, and ``activate()``, which
installs it (with the two modes) and restores it all.

``torch.cuda.*`` and ``torch.accelerator`` report the simulated devices;
``torch.load``/``save`` keep simulated-CUDA storages as CUDA; DataLoader pinning,
packed sequences and DataParallel behave as on real CUDA; features the
simulation does not model refuse to run (``Unsupported``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, Optional, TypeVar

import torch
import torch.nn.functional  # make sure F.* exist before patching
import torch.serialization
import torch.utils.data
import torch.utils.data._utils.pin_memory as _pin_module
from torch.nn.utils.rnn import PackedSequence

from devfix.verify.simulator import (
    dataparallel,
    indexing,  # noqa: F401 - registers the indexing handlers
)
from devfix.verify.simulator import state as _state
from devfix.verify.simulator.checks import (
    LOAD_MESSAGE,
    check_ordinal,
    cuda_device,
    device_error,
    norm_device,
    touch_device,
)
from devfix.verify.simulator.modes import DispatchMode, FunctionMode, from_numpy, no_function_mode, pin_error
from devfix.verify.simulator.state import State, Unsupported
from devfix.verify.simulator.tags import (
    TAG,
    TORCH_DIR,
    cuda,
    index_of,
    is_sim,
    set_index,
    set_storage_index,
    sim_device,
    sim_index,
    tensors,
)

_MISSING = object()
_T = TypeVar("_T")


class _Patcher:
    def __init__(self) -> None:
        self._saved: list[tuple[object, str, object]] = []  # (object, attribute, old value or _MISSING)

    def set(self, obj: object, name: str, value: object) -> None:
        self._saved.append(
            (obj, name, obj.__dict__.get(name, _MISSING) if isinstance(obj, type) else getattr(obj, name, _MISSING))
        )
        setattr(obj, name, value)

    def restore(self) -> None:
        for obj, name, old in reversed(self._saved):
            if old is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(obj, name)
            else:
                setattr(obj, name, old)
        self._saved.clear()


def _unsupported(feature: str) -> Callable[..., NoReturn]:
    def raiser(*a: object, **k: object) -> NoReturn:
        raise Unsupported(feature)

    return raiser


class _IdleStream:
    """What ``torch.accelerator.current_stream()`` returns: never capturing."""

    def is_capturing(self) -> bool:
        return False

    def synchronize(self) -> None:
        return None

    def query(self) -> bool:
        return True


_NOT_CAPTURING = _IdleStream()


def _no_op(*a: object, **k: object) -> None:
    return None


def _cuda_index(device: Any = None) -> int:
    """torch.cuda's reading of a device argument: None or a bare 'cuda' is the
    current device; an int, 'cuda:1' or torch.device('cuda', 1) is that index."""
    st = _state.current()
    current = st.current_device if st is not None else 0
    if device is None:
        return current
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = torch.device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current if d.index is None else d.index


def _set_device(device: Any = None) -> None:
    """torch.cuda.set_device: a negative index is a no-op; past the GPUs, invalid ordinal."""
    index = _cuda_index(device)
    if index < 0:
        return
    check_ordinal(index, "torch.cuda.set_device()")
    touch_device()
    _state.active().current_device = index


def _current_device() -> int:
    touch_device()
    return _state.active().current_device


def _exchange_device(index: int) -> int:
    """What torch.cuda.device(...).__enter__ calls: select `index`, return the previous one."""
    if index < 0:
        return -1
    check_ordinal(index, "torch.cuda.device()")
    touch_device()
    st = _state.active()
    prev, st.current_device = st.current_device, index
    return prev


def _maybe_exchange_device(index: int) -> int:
    if index < 0:
        return -1
    st = _state.active()
    prev, st.current_device = st.current_device, index
    return prev


def _device_properties(props: types.SimpleNamespace) -> Callable[..., types.SimpleNamespace]:
    def get_device_properties(device: Any = None) -> types.SimpleNamespace:
        touch_device()
        index = _cuda_index(device)
        if index < 0 or index >= _state.active().devices:
            raise AssertionError("Invalid device id")
        return props

    return get_device_properties


def _synchronize(device: Any = None) -> None:
    touch_device()
    if device is not None:
        check_ordinal(_cuda_index(device), "torch.cuda.synchronize()")


def _pin_memory(data: _T, device: Any = None) -> _T:
    """DataLoader pinning: CPU tensors pass (a CPU build cannot pin), device tensors fail."""
    for t in tensors(data):
        if is_sim(t):
            pin_error(t, frame=sys._getframe(1))
    return data


def _location_tag(orig: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    @functools.wraps(orig)
    def location_tag(storage: Any) -> str | None:
        s = getattr(storage, "_untyped_storage", storage)
        i = getattr(s, TAG, None)
        if i is not None:
            return cuda(i)
        return orig(storage)

    return location_tag


def _restore_location(orig: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    def default_restore_location(storage: Any, location: str) -> Any:
        if isinstance(location, str) and location.startswith("cuda"):
            st = _state.current()
            if st is not None and st.cpu_only_load and getattr(st.local, "no_map_location", False):
                device_error(
                    RuntimeError,
                    LOAD_MESSAGE,
                    "torch.load()",
                    {"checkpoint": location},
                    "DEV010",
                    "the checkpoint holds CUDA tensors and no map_location was given",
                )
            index = _cuda_index(location)
            if st is not None and index >= st.devices:  # torch.serialization._validate_device
                device_error(
                    RuntimeError,
                    f"Attempting to deserialize object on CUDA device {index} but "
                    f"torch.cuda.device_count() is {st.devices}. Please use torch.load with "
                    "map_location to map your storages to an existing device.",
                    "torch.load()",
                    {"checkpoint": cuda(index)},
                    "DEV010",
                    f"the checkpoint was saved on {cuda(index)}; map_location=device loads it "
                    "onto a device this machine has",
                )
            target = norm_device(location)
            s = getattr(storage, "_untyped_storage", storage)
            touch_device()
            set_storage_index(s, index_of(target))
            return storage
        return orig(storage, location)

    return default_restore_location


def _load(orig: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(orig)
    def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        st = _state.current()
        prev = getattr(st.local, "no_map_location", False) if st else False
        if st:
            st.local.no_map_location = map_location is None
        try:
            return orig(f, map_location, *args, **kwargs)
        finally:
            if st:
                st.local.no_map_location = prev

    return load


TensorListList = list[list[Optional[torch.Tensor]]]
# (device, dtype) -> (the tensor lists of that group, their indices in the lists given)
Grouped = dict[tuple[torch.device, torch.dtype], tuple[TensorListList, list[int]]]


def _group_by_device(original: Callable[[TensorListList, bool], Grouped]) -> Callable[[TensorListList, bool], Grouped]:
    """torch's grouping of tensor lists by (device, dtype) for the ``_foreach_*``
    kernels (optimizers, clip_grad_norm_), by simulated device: the real one groups
    by the real device, the CPU, and would hand one kernel tensors of two GPUs."""

    @functools.wraps(original)
    def group_tensors_by_device_and_dtype(tensorlistlist: TensorListList, with_indices: bool = False) -> Grouped:
        grouped: Grouped = {}
        for (device, dtype), (lists, indices) in original(tensorlistlist, True).items():
            keys = [sim_index(t) if t is not None else None for t in lists[0]]
            for key in dict.fromkeys(keys):
                chosen = [j for j, k in enumerate(keys) if k == key]
                sub = [[lst[j] for j in chosen] if len(lst) == len(keys) else lst for lst in lists]
                where = torch.device("cuda", key) if key is not None else device
                grouped[(where, dtype)] = (sub, [indices[j] for j in chosen] if with_indices else [])
        return grouped

    return group_tensors_by_device_and_dtype


def _pack_padded(original: Callable[..., PackedSequence]) -> Callable[..., PackedSequence]:
    """pack_padded_sequence refuses `lengths` on the GPU, as real CUDA does."""

    @functools.wraps(original)
    def pack_padded_sequence(input: torch.Tensor, lengths: Any, *args: Any, **kwargs: Any) -> PackedSequence:
        if isinstance(lengths, torch.Tensor) and is_sim(lengths):
            device_error(
                RuntimeError,
                f"'lengths' argument should be a 1D CPU int64 tensor, but got 1D {sim_device(lengths)} Long tensor",
                "pack_padded_sequence()",
                {"lengths": sim_device(lengths)},
                "DEV004",
                "the lengths of a packed sequence must stay on the CPU",
            )
        return original(input, lengths, *args, **kwargs)

    return pack_padded_sequence


def _pad_packed(
    original: Callable[..., tuple[torch.Tensor, torch.Tensor]],
) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """pad_packed_sequence as on real CUDA: the padded output follows the packed data.

    Its implementation builds the padded tensor with the host's options and fills it, which
    the function mode would read as a CPU tensor meeting CUDA indices. Run it with the
    function mode off (the dispatch mode still propagates tags), then place the output.
    """

    @functools.wraps(original)
    def pad_packed_sequence(sequence: PackedSequence, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        with no_function_mode():
            padded, lengths = original(sequence, *args, **kwargs)
        index = sim_index(sequence.data)
        if index is not None:
            set_index(padded, index)
        return padded, lengths

    return pad_packed_sequence


def _guarded_class(cls: type[Any], feature: str, is_cuda: Callable[..., bool]) -> type[Any]:
    """Subclass that refuses construction when it would act on CUDA."""

    class Guard(cls):  # type: ignore[misc]  # a subclass of the class given
        def __init__(self, *a: Any, **k: Any) -> None:
            if is_cuda(*a, **k):
                raise Unsupported(feature)
            super().__init__(*a, **k)

    Guard.__name__ = cls.__name__
    Guard.__qualname__ = cls.__qualname__
    return Guard


def _autocast_is_cuda(device_type: object = None, *a: object, enabled: object = True, **k: object) -> bool:
    return device_type == "cuda" and bool(enabled)


def _scaler_is_cuda(device: object = "cuda", *a: object, enabled: object = True, **k: object) -> bool:
    return str(device).startswith("cuda") and bool(enabled)


LEGACY_TYPES = (
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
)


def _legacy_cuda_type(name: str) -> type:
    """`torch.cuda.FloatTensor(...)`: a CUDA-only constructor (PyTorch-GAN's `Tensor(n, 1)` with
    `Tensor = torch.cuda.FloatTensor if cuda else ...`). Builds the tensor with the CPU type and
    puts it on the current simulated GPU; as an argument of `.type()` it keeps its `dtype` and
    `is_cuda`, as the real type object does."""
    cpu_type = getattr(torch, name)

    class LegacyCudaType:
        dtype = cpu_type.dtype
        is_cuda = True

        def __new__(cls, *args: Any, **kwargs: Any) -> torch.Tensor:  # type: ignore[misc]  # as the real type
            tensor: torch.Tensor = cpu_type(*args, **kwargs)
            return tensor.to(cuda_device())

    LegacyCudaType.__name__ = name
    LegacyCudaType.__qualname__ = name
    LegacyCudaType.__module__ = "torch.cuda"
    return LegacyCudaType


@contextlib.contextmanager
def activate(state: State) -> Iterator[State]:
    """Install the simulated devices (``state.devices`` GPUs) for the duration of the block."""
    p = _Patcher()
    cuda_mod = torch.cuda
    props = types.SimpleNamespace(
        name="devfix simulated CUDA device",
        major=8,
        minor=0,
        total_memory=16 * 1024**3,
        multi_processor_count=108,
        is_integrated=False,
    )
    get_properties = _device_properties(props)
    state.exclude(TORCH_DIR)
    try:
        _state.set_current(state)
        for name, value in {
            "is_available": lambda: True,
            "device_count": lambda: state.devices,
            "current_device": _current_device,
            "get_device_name": lambda device=None: get_properties(device).name,
            "get_device_capability": lambda device=None: (get_properties(device).major, get_properties(device).minor),
            "get_device_properties": get_properties,
            "synchronize": _synchronize,
            "_exchange_device": _exchange_device,
            "_maybe_exchange_device": _maybe_exchange_device,
            "manual_seed": _no_op,  # real torch queues these lazily: no init
            "manual_seed_all": _no_op,  # real torch queues these lazily: no init
            "seed": _no_op,  # real torch queues these lazily: no init
            "seed_all": _no_op,  # real torch queues these lazily: no init
            "empty_cache": lambda: None,
            "ipc_collect": lambda: None,
            "is_initialized": lambda: state.device_used and not state.in_bad_fork,
            "is_bf16_supported": lambda *a, **k: True,
            "_lazy_init": touch_device,
            "set_device": _set_device,
            "Stream": _unsupported("torch.cuda.Stream (streams are not simulated)"),
            "Event": _unsupported("torch.cuda.Event (events are not simulated)"),
            "stream": _unsupported("torch.cuda.stream (streams are not simulated)"),
            "current_stream": _unsupported("torch.cuda.current_stream (streams are not simulated)"),
            "default_stream": _unsupported("torch.cuda.default_stream (streams are not simulated)"),
            "graph": _unsupported("torch.cuda.graph (CUDA graphs are not simulated)"),
            "CUDAGraph": _unsupported("torch.cuda.CUDAGraph (CUDA graphs are not simulated)"),
        }.items():
            p.set(cuda_mod, name, value)
        for name in LEGACY_TYPES:
            p.set(cuda_mod, name, _legacy_cuda_type(name))
        for name in (
            "memory_allocated",
            "max_memory_allocated",
            "memory_reserved",
            "max_memory_reserved",
            "memory_stats",
            "memory_summary",
            "reset_peak_memory_stats",
            "mem_get_info",
            "set_per_process_memory_fraction",
            "memory_cached",
            "max_memory_cached",
        ):
            p.set(cuda_mod, name, _unsupported(f"torch.cuda.{name} (memory is not simulated)"))
        acc = torch.accelerator
        p.set(acc, "is_available", lambda: True)
        p.set(acc, "device_count", lambda: state.devices)
        p.set(acc, "current_accelerator", lambda *a, **k: torch.device("cuda"))
        p.set(acc, "current_device_index", _current_device)
        p.set(acc, "set_device_index", lambda d=0, /: _set_device(d))
        p.set(torch._C, "_accelerator_exchangeDevice", _exchange_device)  # torch.accelerator.device_index
        p.set(torch._C, "_accelerator_maybeExchangeDevice", _maybe_exchange_device)
        p.set(acc, "synchronize", lambda *a: None)
        # torch's optimizers ask whether the current stream is capturing a graph
        p.set(acc, "current_stream", lambda *a: _NOT_CAPTURING)
        p.set(cuda_mod, "is_current_stream_capturing", lambda: False)
        # unsupported features: refuse rather than pass unverified
        p.set(torch, "compile", _unsupported("torch.compile"))
        ac = _guarded_class(
            torch.amp.autocast_mode.autocast, 'torch.autocast(device_type="cuda") (AMP)', _autocast_is_cuda
        )
        p.set(torch, "autocast", ac)
        p.set(torch.amp, "autocast", ac)
        p.set(torch.cuda.amp, "autocast", _unsupported("torch.cuda.amp.autocast (AMP)"))
        p.set(torch.cuda.amp, "GradScaler", _unsupported("torch.cuda.amp.GradScaler (AMP)"))
        p.set(
            torch.amp,
            "GradScaler",
            _guarded_class(torch.amp.GradScaler, "torch.amp.GradScaler on cuda (AMP)", _scaler_is_cuda),
        )
        import torch.utils.cpp_extension as cpp_ext

        p.set(cpp_ext, "load_inline", _unsupported("torch.utils.cpp_extension.load_inline (custom CUDA kernels)"))
        p.set(cpp_ext, "load", _unsupported("torch.utils.cpp_extension.load (custom CUDA kernels)"))
        import torch.distributed as dist

        if hasattr(dist, "init_process_group"):
            p.set(dist, "init_process_group", _unsupported("torch.distributed (multi-process / multi-GPU)"))
        # serialization, loaders, DataParallel
        p.set(torch.serialization, "location_tag", _location_tag(torch.serialization.location_tag))
        p.set(
            torch.serialization,
            "default_restore_location",
            _restore_location(torch.serialization.default_restore_location),
        )
        p.set(torch, "load", _load(torch.load))
        p.set(torch, "from_numpy", from_numpy(torch.from_numpy))
        p.set(torch.serialization, "load", torch.load)
        p.set(_pin_module, "pin_memory", _pin_memory)
        # the RNN modules ask cuDNN about "cuda" weights; there is no cuDNN here
        p.set(torch.backends.cudnn, "is_acceptable", lambda t: False)
        # optimizers and clip_grad_norm_ run one _foreach kernel per (simulated) device
        group = _group_by_device(torch.utils._foreach_utils._group_tensors_by_device_and_dtype)
        for name in (
            "torch.utils._foreach_utils",
            "torch.optim.optimizer",
            "torch.optim.swa_utils",
            "torch.nn.utils.clip_grad",
        ):
            p.set(importlib.import_module(name), "_group_tensors_by_device_and_dtype", group)
        # DataParallel: torch's own forward and replicate, with the CUDA pieces simulated
        p.set(torch.nn.DataParallel, "forward", dataparallel.checked_forward(torch.nn.DataParallel.forward))
        # (torch.nn.parallel.replicate & co. name the functions: patch the modules)
        parallel = {
            n: importlib.import_module(f"torch.nn.parallel.{n}")
            for n in ("scatter_gather", "replicate", "data_parallel")
        }
        p.set(parallel["scatter_gather"], "Scatter", dataparallel.Scatter)
        p.set(parallel["scatter_gather"], "Gather", dataparallel.Gather)
        p.set(parallel["replicate"], "_broadcast_coalesced_reshape", dataparallel.broadcast_coalesced_reshape)
        p.set(parallel["data_parallel"], "parallel_apply", dataparallel.parallel_apply)
        p.set(torch.nn.utils.rnn, "pad_packed_sequence", _pad_packed(torch.nn.utils.rnn.pad_packed_sequence))
        p.set(torch.nn.utils.rnn, "pack_padded_sequence", _pack_padded(torch.nn.utils.rnn.pack_padded_sequence))

        fmode, dmode = FunctionMode(), DispatchMode()  # type: ignore[no-untyped-call]  # torch's __init__
        with dmode, fmode:
            yield state
    finally:
        p.restore()
        _state.set_current(None)

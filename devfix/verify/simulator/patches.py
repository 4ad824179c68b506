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
import itertools
import sys
import types

import torch
import torch.nn.functional  # noqa: F401  (make sure F.* exist before patching)
import torch.serialization
import torch.utils.data
import torch.utils.data._utils.pin_memory as _pin_module
from torch.utils import _pytree as pytree

from devfix.verify.simulator import state as _state
from devfix.verify.simulator.checks import LOAD_MESSAGE, device_error, norm_device, touch_device
from devfix.verify.simulator.modes import DispatchMode, FunctionMode, move, no_function_mode, pin_error
from devfix.verify.simulator.state import State, Unsupported
from devfix.verify.simulator.tags import (
    TAG, TORCH_DIR, cuda, index_of, is_sim, set_index, set_storage_index, sim_device, sim_index, tensors,
)

_MISSING = object()


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


def _unsupported(feature):
    def raiser(*a, **k):
        raise Unsupported(feature)

    return raiser


def _cuda_call(result=None):
    """A torch.cuda function that "works" (and initialises the device)."""

    def fn(*a, **k):
        touch_device()
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
    touch_device()


def _pin_memory(data, device=None):
    """DataLoader pinning: CPU tensors pass (a CPU build cannot pin), device tensors fail."""
    for t in tensors(data):
        if is_sim(t):
            pin_error(t, frame=sys._getframe(1))
    return data


def _location_tag(orig):
    @functools.wraps(orig)
    def location_tag(storage):
        s = getattr(storage, "_untyped_storage", storage)
        i = getattr(s, TAG, None)
        if i is not None:
            return cuda(i)
        return orig(storage)

    return location_tag


def _restore_location(orig):
    def default_restore_location(storage, location):
        if isinstance(location, str) and location.startswith("cuda"):
            target = norm_device(location)
            st = _state.current()
            if st is not None and st.cpu_only_load and getattr(st.local, "no_map_location", False):
                device_error(
                    RuntimeError, LOAD_MESSAGE, "torch.load()", {"checkpoint": target},
                    "DEV010", "the checkpoint holds CUDA tensors and no map_location was given",
                )
            s = getattr(storage, "_untyped_storage", storage)
            touch_device()
            set_storage_index(s, index_of(target))
            return storage
        return orig(storage, location)

    return default_restore_location


def _load(orig):
    @functools.wraps(orig)
    def load(f, map_location=None, *args, **kwargs):
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


def _dp_forward(self, *inputs, **kwargs):
    """DataParallel.forward for one device: same check and scatter as the real one."""
    if not self.device_ids:
        return self.module(*inputs, **kwargs)
    for t in itertools.chain(self.module.parameters(), self.module.buffers()):
        if not is_sim(t):
            device_error(
                RuntimeError,
                "module must have its parameters and buffers on device cuda:0 "
                "(device_ids[0]) but found one of them on device: cpu",
                "DataParallel.forward()", {"module": "cpu", "device_ids[0]": cuda(0)},
                "DEV003", "the wrapped module was moved off cuda:0",
            )

    def scatter(x):
        return move(x, cuda(0)) if isinstance(x, torch.Tensor) else x

    with no_function_mode():
        inputs = pytree.tree_map(scatter, inputs)
        kwargs = pytree.tree_map(scatter, kwargs)
    return self.module(*inputs, **kwargs)


def _pack_padded(original):
    """pack_padded_sequence refuses `lengths` on the GPU, as real CUDA does."""

    @functools.wraps(original)
    def pack_padded_sequence(input, lengths, *args, **kwargs):
        if isinstance(lengths, torch.Tensor) and is_sim(lengths):
            device_error(
                RuntimeError,
                f"'lengths' argument should be a 1D CPU int64 tensor, but got 1D {sim_device(lengths)} Long tensor",
                "pack_padded_sequence()", {"lengths": sim_device(lengths)}, "DEV004",
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
        with no_function_mode():
            padded, lengths = original(sequence, *args, **kwargs)
        index = sim_index(sequence.data)
        if index is not None:
            set_index(padded, index)
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
    p = _Patcher()
    cuda_mod = torch.cuda
    props = types.SimpleNamespace(
        name="devfix simulated CUDA device", major=8, minor=0,
        total_memory=16 * 1024**3, multi_processor_count=108, is_integrated=False,
    )
    state.exclude(TORCH_DIR)
    try:
        _state.set_current(state)
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
        for name in (
            "memory_allocated", "max_memory_allocated", "memory_reserved",
            "max_memory_reserved", "memory_stats", "memory_summary",
            "reset_peak_memory_stats", "mem_get_info", "set_per_process_memory_fraction",
            "memory_cached", "max_memory_cached",
        ):
            p.set(cuda_mod, name, _unsupported(f"torch.cuda.{name} (memory is not simulated)"))
        acc = torch.accelerator
        p.set(acc, "is_available", lambda: True)
        p.set(acc, "device_count", lambda: 1)
        p.set(acc, "current_accelerator", lambda *a, **k: torch.device("cuda"))
        p.set(acc, "current_device_index", lambda: 0)
        p.set(acc, "set_device_index", lambda d=0, /: _set_device(d))
        p.set(acc, "synchronize", lambda *a: None)
        # torch's optimizers ask whether the current stream is capturing a graph
        p.set(acc, "current_stream", lambda *a: _NOT_CAPTURING)
        p.set(cuda_mod, "is_current_stream_capturing", lambda: False)
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

        fmode, dmode = FunctionMode(), DispatchMode()
        with dmode, fmode:
            yield state
    finally:
        p.restore()
        _state.set_current(None)

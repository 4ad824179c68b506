"""``nn.DataParallel`` (and ``nn.parallel.data_parallel``) on the simulated GPUs.

torch's own ``DataParallel.forward`` and ``replicate`` run unchanged; only the
pieces that talk to CUDA are replaced, each doing what the real one does:

- ``Scatter``: the inputs are chunked along ``dim`` (``Tensor.chunk``, as
  ``comm.scatter`` does) and each chunk is copied to its device;
- ``_broadcast_coalesced_reshape``: each parameter and buffer is copied to every
  replica's device; the copy on ``device_ids[0]`` is the original's storage, so
  in-place updates there are kept (as the DataParallel docs promise); gradients
  of the copies flow back to the originals;
- ``parallel_apply``: the replicas run one after the other in this thread (the
  simulation is per thread), each with its device as the current device, as the
  real threads do with ``torch.cuda.device``;
- ``Gather``: the outputs are copied to ``output_device`` and concatenated.

Plain tensor attributes of the module are shared by the replicas, as on real
CUDA, so one left on ``cuda:0`` meets ``cuda:1`` inputs in replica 1.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import torch
from torch._utils import _get_device_index

from devfix.verify.simulator import state as _state
from devfix.verify.simulator.checks import classify, device_error
from devfix.verify.simulator.modes import move, no_function_mode
from devfix.verify.simulator.tags import CPU, cuda, is_sim, sim_device, sim_index

Forward = Callable[..., Any]  # DataParallel.forward(self, *inputs, **kwargs)


def checked_forward(original: Forward) -> Forward:
    """DataParallel.forward, recording the parameter check as a device error (DEV003)."""

    def forward(self: torch.nn.DataParallel[Any], *inputs: Any, **kwargs: Any) -> Any:
        if self.device_ids:
            src = cuda(self.device_ids[0])
            for t in itertools.chain(self.module.parameters(), self.module.buffers()):
                dev = sim_device(t)
                if dev != src:
                    device_error(
                        RuntimeError,
                        f"module must have its parameters and buffers on device {src} "
                        f"(device_ids[0]) but found one of them on device: {dev}",
                        "DataParallel.forward()",
                        {"module": dev, "device_ids[0]": src},
                        "DEV003",
                        f"the wrapped module was moved off {src}",
                    )
        return original(self, *inputs, **kwargs)

    return forward


class Scatter:
    """torch.nn.parallel._functions.Scatter on the simulated GPUs."""

    @staticmethod
    def apply(
        target_gpus: Sequence[Any], chunk_sizes: Sequence[int] | None, dim: int, input: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        gpus = [_get_device_index(x, True) for x in target_gpus]
        with no_function_mode():
            if chunk_sizes is not None:
                chunks = torch.split(input, list(chunk_sizes), dim)
            else:
                chunks = input.chunk(len(gpus), dim)
            return tuple(move(c, cuda(g), copy=True) for c, g in zip(chunks, gpus))


class Gather:
    """torch.nn.parallel._functions.Gather on the simulated GPUs."""

    @staticmethod
    def apply(target_device: Any, dim: int, *inputs: torch.Tensor) -> torch.Tensor:
        for t in inputs:
            if not is_sim(t):
                st = _state.current()
                meet = st.user_frame() if st is not None else None
                rule, detail = classify(t, None, meet)
                device_error(
                    AssertionError,
                    "Gather function not implemented for CPU tensors",
                    "DataParallel gather",
                    {"output": sim_device(t)},
                    rule,
                    "a replica returned a CPU tensor: " + detail,
                )
        if target_device == "cpu":
            target = CPU
        else:
            index = _get_device_index(target_device, True)
            target = CPU if index < 0 else cuda(index)
        if all(t.dim() == 0 for t in inputs) and dim == 0:
            inputs = tuple(t.view(1) for t in inputs)
            warnings.warn(
                "Was asked to gather along dimension 0, but all input tensors were scalars; "
                "will instead unsqueeze and return a vector.",
                stacklevel=2,
            )
        with no_function_mode():
            return torch.cat([move(t, target) for t in inputs], dim)


def broadcast_coalesced_reshape(
    tensors: Sequence[torch.Tensor], devices: Iterable[Any], detach: bool = False
) -> list[list[torch.Tensor]]:
    """torch.nn.parallel.replicate._broadcast_coalesced_reshape: [copies per device]."""
    out = []
    with no_function_mode():
        for index in (_get_device_index(d, True) for d in devices):
            row = []
            for t in tensors:
                if sim_index(t) == index:  # the source device: the original's storage
                    row.append(t if detach else t.view_as(t))
                else:
                    row.append(move(t.detach() if detach else t, cuda(index), copy=True))
            out.append(row)
    return out


@contextlib.contextmanager
def on_device(index: int, replica: int | None = None) -> Iterator[None]:
    """torch.cuda.device(index) for this thread, and which replica runs."""
    st = _state.current()
    if st is None:
        yield
        return
    prev, prev_replica = st.current_device, getattr(st.local, "replica", None)
    st.current_device = index
    st.local.replica = (replica, index) if replica is not None else prev_replica
    try:
        yield
    finally:
        st.current_device = prev
        st.local.replica = prev_replica


def parallel_apply(
    modules: Sequence[torch.nn.Module],
    inputs: Sequence[Any],
    kwargs_tup: Sequence[dict[str, Any]] | None = None,
    devices: Sequence[Any] | None = None,
) -> list[Any]:
    """torch.nn.parallel.parallel_apply, one replica after the other in this thread."""
    assert len(modules) == len(inputs), (
        f"The number of modules {len(modules)} is not equal to the number of inputs {len(inputs)}"
    )
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    devices = devices if devices is not None else [None] * len(modules)
    outputs = []
    for i, (module, input, kwargs, device) in enumerate(zip(modules, inputs, kwargs_tup, devices)):
        if device is None:
            first = next((t for t in torch.utils._pytree.tree_leaves(input) if isinstance(t, torch.Tensor)), None)
            index = sim_index(first) if first is not None else 0
        else:
            index = _get_device_index(device, True)
        if not isinstance(input, (list, tuple)):
            input = (input,)
        with on_device(index if index is not None else 0, replica=i):
            outputs.append(module(*input, **kwargs))
    return outputs

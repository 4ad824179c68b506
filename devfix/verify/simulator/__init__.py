"""The simulated CUDA devices: ``cuda:0`` ... ``cuda:N-1`` whose tensors really
live on the CPU.

Design (why it looks like this)
-------------------------------
*Where "on cuda:1" lives* (``tags``): the device index is a tag on the tensor's
storage, so that it follows every alias and dies with the storage.  No
``Tensor`` subclass is involved, so ``Parameter`` and ``Module._apply`` keep
working.

*Two modes* (``modes``): a ``TorchFunctionMode`` implements the device API and
checks devices at the calls the user wrote, through a table from the called
function to its handler (``indexing`` adds the handlers of indexing, gather,
scatter, take and embedding, whose device rules differ from the rest); a
``TorchDispatchMode`` propagates the tag through every aten op, backward
included.  ``checks`` holds the checks, the exact error texts of real CUDA and
the choice of the devfix rule that fixes each error.

*Patches* (``patches``): everything patched at module level (``torch.cuda.*``
and ``torch.accelerator`` for N devices, ``torch.load``/``save`` location hooks,
DataLoader pinning, the optimizers' per-device grouping, DataParallel's CUDA
pieces in ``dataparallel``, unsupported features) is installed by
``activate()``, which restores it all.

*State* (``state``): the run's settings (how many GPUs, where the user's code
is), the current device of each thread, and the first device error seen; no
torch import.
"""

from __future__ import annotations

from typing import Any

import torch._dynamo  # noqa: F401  (the modes import it on first use: pay it once, before forking)

from devfix.verify.simulator.patches import activate
from devfix.verify.simulator.state import Event, State, Unsupported
from devfix.verify.simulator.tags import is_sim, sim_device

__all__ = ["Event", "State", "Unsupported", "activate", "describe_tensor", "is_sim", "sim_device"]


def describe_tensor(t: Any) -> str:
    """Short text for debugging: device as the script sees it."""
    return f"{tuple(t.shape)} on {sim_device(t)}"

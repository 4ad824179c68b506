"""The simulated CUDA device: ``cuda:0`` whose tensors really live on the CPU.

Design (why it looks like this)
-------------------------------
*Where the "is on cuda" bit lives* (``tags``): a tag on the tensor's storage,
so that it follows every alias and dies with the storage.  No ``Tensor``
subclass is involved, so ``Parameter`` and ``Module._apply`` keep working.

*Two modes* (``modes``): a ``TorchFunctionMode`` implements the device API and
checks devices at the calls the user wrote (``checks`` holds the checks and the
exact error texts of real CUDA); a ``TorchDispatchMode`` propagates the tag
through every aten op, backward included.

*Patches* (``patches``): everything patched at module level (``torch.cuda.*``,
``torch.load``/``save`` location hooks, DataLoader pinning, DataParallel,
unsupported features) is installed by ``activate()``, which restores it all.

*State* (``state``): the run's settings, where the user's code is, and the first
device error seen; no torch import.
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

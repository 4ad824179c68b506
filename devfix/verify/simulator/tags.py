"""Which simulated device a tensor is on: a tag on its storage.

A tensor's device is a property of its storage: views, ``.data``, ``.detach()``,
``Parameter(t)`` and ``param.data = t`` (which ``Module._apply`` uses for
``model.to(device)``) all share storage with the tensor they come from.  So the
tag is an attribute on the tensor's ``UntypedStorage`` Python object, holding the
simulated CUDA device index (absent or ``None``: the tensor is where torch says,
normally the CPU).  PyTorch preserves that object for as long as the storage
lives, so the tag follows every alias, dies with the storage and never goes
stale (an id-keyed side table would be reused after free).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterable

import torch
from torch.utils import _pytree as pytree

from devfix.verify.simulator import state as _state

TAG = "_devfix_sim_cuda"
ORIGIN = "_devfix_origin"
MADE_BY_FACTORY = "_devfix_made_by_factory"  # the factory's own result, not a tensor computed from it
MOVED_COPY = "_devfix_moved_copy"  # (id of the CPU tensor, weak reference to its device copy)
CPU = "cpu"
TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_TB = torch._C.TensorBase
_real_device: Callable[[torch.Tensor], torch.device] = _TB.__dict__["device"].__get__

# where the user created a tensor's data: (file, line, function, in a module's method)
Origin = tuple[str, int, str, bool]
# what `note_moved_copy` leaves on a storage: (id of the CPU tensor, its device copy)
MovedCopy = tuple[int, weakref.ReferenceType[torch.Tensor]]


def cuda(index: int) -> str:
    return f"cuda:{index}"


def storage(t: torch.Tensor) -> torch.UntypedStorage | None:
    try:
        return t.untyped_storage()
    except Exception:  # noqa: BLE001 - sparse, nested, ... : never simulated
        return None


def sim_index(t: torch.Tensor) -> int | None:
    """The simulated CUDA index of `t`, or None when it is not on a simulated device."""
    s = storage(t)
    index: int | None = None if s is None else getattr(s, TAG, None)
    return index


def is_sim(t: torch.Tensor) -> bool:
    return sim_index(t) is not None


def sim_device(t: torch.Tensor) -> str:
    """The device the script sees, as text: 'cuda:1', 'cpu', 'meta'..."""
    i = sim_index(t)
    return cuda(i) if i is not None else str(_real_device(t))


def real_type(t: torch.Tensor) -> str:
    return _real_device(t).type


def set_index(t: torch.Tensor, index: int | None) -> None:
    """Put `t` (its storage) on simulated device `index`, or back on the host (None)."""
    s = storage(t)
    if s is not None:
        set_storage_index(s, index)


def set_storage_index(s: object, index: int | None) -> None:
    was = getattr(s, TAG, None)
    if index is not None and was is None:
        st = _state.current()
        if st is not None:
            st.tensors_on_device += 1
    if index != was:
        setattr(s, TAG, index)


def index_of(device: str | None) -> int | None:
    """'cuda:3' -> 3; 'cpu' / None -> None."""
    if device is None or not device.startswith("cuda:"):
        return None
    return int(device[5:])


def tensors(obj: object) -> list[torch.Tensor]:
    return [x for x in pytree.tree_leaves(obj) if isinstance(x, torch.Tensor)]


def first_index(ts: Iterable[torch.Tensor]) -> int | None:
    """Simulated device of the first tensor in `ts` that is on one."""
    for t in ts:
        i = sim_index(t)
        if i is not None:
            return i
    return None


def _storage_ids(ts: Iterable[torch.Tensor]) -> set[int]:
    out = set()
    for t in ts:
        s = storage(t)
        if s is not None:
            out.add(id(s))
    return out


def fresh_outputs(out: object, inputs: Iterable[torch.Tensor]) -> list[torch.Tensor]:
    """Outputs that do not alias an input's storage (so their tag is ours to set)."""
    ins = _storage_ids(inputs)
    res = []
    for t in tensors(out):
        s = storage(t)
        if s is not None and id(s) not in ins:
            res.append(t)
    return res


def origin(t: torch.Tensor) -> Origin | None:
    """(file, line, function, in_module) where the user created `t`'s data, if known."""
    where: Origin | None = getattr(storage(t), ORIGIN, None)
    return where


def set_origin(t: torch.Tensor, where: Origin | None) -> None:
    s = storage(t)
    if s is not None and where is not None:
        setattr(s, ORIGIN, where)


def made_by_factory(t: torch.Tensor) -> bool:
    """`t` is the very tensor a factory of the user's code returned (`torch.tensor([])`), not
    a view of it, a batch or a result computed from it (which share or inherit its origin)."""
    made: int | None = getattr(storage(t), MADE_BY_FACTORY, None)
    return made == id(t)


def set_made_by_factory(t: torch.Tensor) -> None:
    s = storage(t)
    if s is not None:
        setattr(s, MADE_BY_FACTORY, id(t))


def note_moved_copy(t: torch.Tensor, copy: torch.Tensor) -> None:
    """`t.to(device)` made `copy`: if `copy` is gone when `t` meets a device tensor, the move
    was thrown away (`mask.to(device)` on a line of its own)."""
    s = storage(t)
    if s is not None:
        try:
            setattr(s, MOVED_COPY, (id(t), weakref.ref(copy)))
        except TypeError:
            pass


def copy_thrown_away(t: torch.Tensor) -> bool:
    noted: MovedCopy | None = getattr(storage(t), MOVED_COPY, None)
    return noted is not None and noted[1]() is None


def pass_on_moved_copy(inputs: Iterable[torch.Tensor], outputs: Iterable[torch.Tensor]) -> None:
    """`~mask[..., None]` computed from a tensor whose device copy was made: the same question
    (was that copy thrown away?) holds for the result."""
    for t in inputs:
        noted: MovedCopy | None = getattr(storage(t), MOVED_COPY, None)
        if noted is not None:
            for o in outputs:
                s = storage(o)
                if s is not None:
                    setattr(s, MOVED_COPY, noted)
            return

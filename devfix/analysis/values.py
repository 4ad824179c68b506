"""Abstract values: what the device-flow analysis knows about one runtime value.

The analysis evaluates a program as it runs on a machine with one GPU, run the way its
author intends (GPU checks true, a `--cuda` option given). Each value gets:

- a *kind*: tensor, module, loader, dataset, device, optimizer, a structure of values
  (tuple/list/dict/batch), or "other";
- a *place*: CPU, DEVICE (the accelerator the program chose; inside an `nn.Module`'s own
  methods, the device the module lives on), or UNKNOWN (moved by a helper, a framework, a
  `.type(...)` whose type is unknown, two branches that disagree...). NONE is the bottom
  of the lattice (no value seen yet);
- its *origins*: the evidence — the nodes where the value got its place (the factory
  without `device=`, the model's constructor, the loader loop that yielded a batch, the
  `.to(device)` that moved it). Rules put their fix at an origin.

Only a definite CPU meeting a definite DEVICE is a bug; UNKNOWN never produces an edit.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Union

from devfix.analysis import torch_api as api

if TYPE_CHECKING:  # nodes only in annotations: the cache's and the workers' imports stay light
    import libcst as cst

# A module's identity in the heap: the id of the node that built it, or, for a value that two
# paths built differently, the set of those ids (see `members`).
Obj = Union[int, frozenset[int]]


class Place(enum.IntEnum):
    NONE = 0
    CPU = 1
    DEVICE = 2
    UNKNOWN = 3

    def join(self, other: Place) -> Place:
        if self is other or other is Place.NONE:
            return self
        if self is Place.NONE:
            return other
        return Place.UNKNOWN


class Kind(enum.Enum):
    TENSOR = "tensor"
    MODULE = "module"
    LOADER = "loader"
    DATASET = "dataset"
    DEVICE = "device"  # a torch.device / device string / index
    OPTIMIZER = "optimizer"
    STRUCT = "struct"  # a tuple, list or dict of values, or a batch of unknown shape
    HOST = "host"  # a Python number, string, NumPy array...: lives on the host, meets nothing
    OTHER = "other"  # anything the analysis does not model


@dataclass(frozen=True, eq=False)
class Origin:
    """Where a value got its place: the evidence a finding quotes, and where its fix goes.

    kinds: "factory" (torch.zeros... without device=), "host" (torch.from_numpy, torch.tensor of
    data), "construct" (a module built), "batch" (yielded by a loader loop), "slice" (sliced from a
    CPU tensor in a loop), "attribute" (a plain tensor attribute of a module), "move" (`.to`,
    `.cuda()`, `device=`), "module" (a module's own parameters or layers, inside its methods),
    "load" (torch.load), "cuda-type" (`torch.cuda.FloatTensor`), "param" (a parameter whose
    callers agree).
    """

    kind: str
    node: cst.CSTNode
    name: str | None = None  # the variable the value was bound to there, when one
    loop: cst.CSTNode | None = None  # for batches and slices: the loop
    binder: cst.CSTNode | None = None  # for batches: the For / Assign that bound `name`
    device: cst.BaseExpression | None = None  # for moves: the device expression used
    guarded: bool = False  # for moves: under a condition about CUDA that is a user's choice
    source: int | None = None  # for batches: the identity of the DataLoader(...) call
    note: str = ""


MAX_ORIGINS = 6


@dataclass(frozen=True, eq=False)
class Value:
    kind: Kind
    place: Place = Place.UNKNOWN
    origins: frozenset[Origin] = frozenset()
    items: tuple[Value, ...] | None = None  # STRUCT: positional items, when known
    keys: tuple[tuple[str, Value], ...] | None = None  # STRUCT: dict items by string key
    element: Value | None = None  # STRUCT/LOADER: the value of any item (iteration, batch[i])
    obj: Obj | None = None  # MODULE: heap identity (the place lives in the heap); see `members`
    scalar: bool = False  # a 0-dim tensor built from a Python number: meets any device
    grad: bool = False  # surely requires grad (a model's output, outside no_grad)
    neutral: bool = False  # MODULE without tensors of its own (ReLU, a loss without weights)
    cls: cst.ClassDef | None = None  # MODULE/DATASET/OTHER instances of a class of this file
    attrs: tuple[tuple[str, Value], ...] = ()  # OTHER: known attributes (argparse options)
    qual: str | None = None  # a reference to an imported name: "torch.nn.Linear"
    ref: cst.CSTNode | None = None  # a reference to a def, class or lambda of this file
    bound: Value | None = None  # with `ref` a method: the instance it is bound to
    flag: str | None = (
        None  # HOST conditions and DEVICE values: "available" | "choice" | "hard" | "param" | "relative" | "constant" | "fixed"
    )
    truth: bool | None = None  # HOST: the value of a condition on a GPU machine run as intended
    cpu: bool | None = None  # HOST: the value of that condition on a CPU-only machine
    text: str | None = None  # HOST: a string constant
    member: bool = False  # TENSOR: a member of a module of unknown class (a layer, parameter or buffer)
    dp: bool = False  # MODULE: wrapped in nn.DataParallel (scatters CPU inputs itself)
    tensor_type: bool = False  # DEVICE: a tensor type (`torch.cuda.FloatTensor`), not a device
    index: bool = False  # DEVICE: maybe a GPU index (an integer option), which `map_location` does not take
    param: cst.CSTNode | None = None  # module world: a method's parameter, unchanged (the FunctionDef)

    def with_place(self, place: Place, origin: Origin | None = None) -> Value:
        origins = frozenset({origin}) if origin is not None else self.origins
        return replace(self, place=place, origins=origins)

    def evidence(self, kind: str) -> tuple[Origin, ...]:
        return tuple(o for o in self.origins if o.kind == kind)

    @property
    def is_tensor(self) -> bool:
        return self.kind is Kind.TENSOR

    def attr(self, name: str) -> Value | None:
        for key, value in self.attrs:
            if key == name:
                return value
        return None


# The flag of a test decorator kept in a name that skips its tests without a GPU.
GPU_SKIP = "gpu-skip"


def condition(truth: bool | None, cpu: bool | None, flag: str | None) -> Value:
    """A condition's value: its truth on a GPU machine run as intended, on a CPU-only one, and
    why ("available": an availability check, "choice": a user's option, "constant", "fixed":
    an option the command line cannot turn off, `type=bool, default=True`)."""
    return Value(Kind.HOST, Place.CPU, truth=truth, cpu=cpu, flag=flag)


def availability(truth: bool | None = True) -> Value:
    """`torch.cuda.is_available()` and the like: true where a GPU is, false where none is."""
    return condition(truth, False if truth is not None else None, "available")


# `torch.cuda.device_count()` and `list(range(torch.cuda.device_count()))`: availability
# conditions on the GPU run (one GPU; none where there is none), known apart by their text, for
# the operations that fail without a GPU: `n // torch.cuda.device_count()`, `gpu_ids[0]`.
GPU_COUNT = "#gpus"
GPU_IDS = "#gpu-ids"


def gpu_count() -> Value:
    return replace(availability(), text=GPU_COUNT)


def gpu_ids() -> Value:
    return replace(availability(), text=GPU_IDS)


def constant(truth: bool | None) -> Value:
    return condition(truth, truth, "constant")


# Where a module lives, with the evidence: the heap maps a module's identity to one of these.
Slot = tuple[Place, frozenset[Origin]]


def members(obj: Obj) -> tuple[int, ...]:
    """The modules a heap identity stands for: one, or each of the modules that two paths
    built (`if a: self.G = G1() elif b: self.G = G2()`), all moved by one `.to()` after them."""
    return tuple(sorted(obj)) if isinstance(obj, frozenset) else (obj,)


def _union(a: Obj | None, b: Obj | None) -> Obj | None:
    if a is None or b is None:
        return None
    if a == b:
        return a
    return frozenset(members(a)) | frozenset(members(b))


def join_slots(a: Slot | None, b: Slot | None) -> Slot:
    if a is None:
        return b if b is not None else (Place.UNKNOWN, frozenset())
    if b is None:
        return a
    place = a[0].join(b[0])
    return (place, a[1] | b[1] if place is not Place.UNKNOWN else frozenset())


UNKNOWN = Value(Kind.OTHER, Place.UNKNOWN)
HOST = Value(Kind.HOST, Place.CPU)


def join(a: Value | None, b: Value | None) -> Value:
    """The value at a point reached from two paths (branches, loop iterations, call sites)."""
    if a is None:
        return b if b is not None else UNKNOWN
    if b is None or a is b:
        return a
    if a.kind is not b.kind:
        if (a.kind is Kind.HOST and b.kind is Kind.TENSOR) or (b.kind is Kind.HOST and a.kind is Kind.TENSOR):
            return UNKNOWN  # `x = 0` then `x = x + loss`: a number or a tensor
        return UNKNOWN
    place = a.place.join(b.place)
    origins = a.origins | b.origins if place is not Place.UNKNOWN else frozenset()
    if len(origins) > MAX_ORIGINS:
        origins = frozenset(list(origins)[:MAX_ORIGINS])
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    element = join(a.element, b.element) if a.element is not None and b.element is not None else None
    return Value(
        a.kind,
        place,
        origins,
        items=items,
        element=element,
        attrs=_join_attrs(a.attrs, b.attrs),
        obj=_union(a.obj, b.obj) if a.kind is Kind.MODULE else a.obj if a.obj == b.obj else None,
        scalar=a.scalar and b.scalar,
        grad=a.grad and b.grad,
        neutral=a.neutral and b.neutral,
        cls=a.cls if a.cls is b.cls else None,
        qual=a.qual if a.qual == b.qual or (api.is_model_factory(a.qual) and api.is_model_factory(b.qual)) else None,
        ref=a.ref if a.ref is b.ref else None,
        flag=a.flag if a.flag == b.flag else None,
        truth=a.truth if a.truth == b.truth else None,
        cpu=a.cpu if a.cpu == b.cpu else None,
        tensor_type=a.tensor_type and b.tensor_type,
        member=a.member and b.member,
        dp=a.dp and b.dp,
    )


def _join_attrs(a: tuple[tuple[str, Value], ...], b: tuple[tuple[str, Value], ...]) -> tuple[tuple[str, Value], ...]:
    """The attributes both paths know (the run's options handed to a helper by every caller)."""
    if not a or not b:
        return ()
    other = dict(b)
    return tuple((name, join(value, other[name])) for name, value in a if name in other)


def on_host_only(value: Value) -> bool:
    """Every tensor in `value` is on the CPU (a dataset item: a tensor, or a tuple or dict of them)."""
    if value.kind is Kind.TENSOR:
        return value.place is Place.CPU
    if value.kind is Kind.HOST:
        return True
    if value.kind is not Kind.STRUCT:
        return False
    parts = [*(value.items or ()), *(item for _, item in value.keys or ())]
    if value.items is None and value.keys is None:
        parts = [value.element] if value.element is not None else []
    return bool(parts) and all(on_host_only(part) for part in parts)


def derived(
    kind: Kind, sources: Iterable[Value | None], *, grad: bool | None = None, scalar: bool = False, met: bool = False
) -> Value:
    """A value computed from `sources` (their places joined, their origins kept).

    `met`: the sources met (arithmetic, `torch.cat`...). When they conflict, CPU against the
    device, the result lives where the fix puts the CPU side: on the device. Joining to UNKNOWN
    instead would hide the next meeting until the first is fixed, and a second run would find it."""
    place = Place.NONE
    origins: frozenset[Origin] = frozenset()
    grad_out = False
    places = set()
    for source in sources:
        if source is None or source.kind is Kind.HOST:
            continue
        if source.scalar and source.kind is Kind.TENSOR:
            continue  # a 0-dim tensor takes the device of what it meets
        places.add(source.place)
        place = place.join(source.place)
        origins = origins | source.origins
        grad_out = grad_out or source.grad
    if met and places == {Place.CPU, Place.DEVICE}:
        place = Place.DEVICE
        origins = frozenset(
            o for s in sources if s is not None and s.place is Place.DEVICE and not s.scalar for o in s.origins
        )
    if place is Place.NONE:
        place = (
            Place.CPU
            if scalar or any(s is not None and s.kind in (Kind.HOST, Kind.TENSOR) for s in sources)
            else Place.UNKNOWN
        )
    if place is Place.UNKNOWN:
        origins = frozenset()
    if len(origins) > MAX_ORIGINS:
        origins = frozenset(list(origins)[:MAX_ORIGINS])
    return Value(kind, place, origins, grad=grad_out if grad is None else grad, scalar=scalar)


def takes_part(value: Value) -> bool:
    """Whether a value's device matters where it meets others: tensors (a 0-dim one takes the
    device of what it meets) and modules that hold tensors."""
    if value.kind is Kind.TENSOR:
        return not value.scalar
    return value.kind is Kind.MODULE and not value.neutral


@dataclass
class Meeting:
    """A place where values must share a device: a module call, arithmetic, `torch.cat`, a
    loss, an index, a host conversion. `node` is the expression; `operands` the values met."""

    node: cst.CSTNode
    kind: str  # "call" (module call), "op" (arithmetic / combining function), "index", "host", "submodule"
    operands: tuple[tuple[cst.CSTNode, Value], ...]
    module: Value | None = None  # for "call": the module called
    detail: str = ""
    requires: frozenset[int] = field(default_factory=frozenset)  # ids of operand nodes that must stay on the host

    def places(self) -> frozenset[Place]:
        found = {v.place for _, v in self.operands if takes_part(v)}
        if self.module is not None and not self.module.neutral:
            found.add(self.module.place)
        return frozenset(found)

    def conflict(self) -> bool:
        if self.kind == "index" and self.detail == "subscript":
            # `t[idx]`: a CPU index into a device tensor is allowed (PyTorch moves it); only a
            # device index into a CPU tensor fails
            (_, base), (_, index) = self.operands[:2]
            return takes_part(base) and takes_part(index) and base.place is Place.CPU and index.place is Place.DEVICE
        if self.kind == "call" and self.module is not None and not self.module.neutral:
            if self.module.place is Place.UNKNOWN:
                # the arguments meet the weights, whose device devfix cannot tell: which of them
                # is in the wrong place is unknown (a CPU `lengths` for `pack_padded_sequence`)
                return False
        places = self.places()
        return Place.CPU in places and Place.DEVICE in places

"""What one file of a run tells the files that import it (spec principle 9).

Each file is analysed once, after the project files it imports (project.py orders them), and
leaves a `ModuleSummary`: for every top-level name, what an importer may rely on —

- a class: an `nn.Module` (does it hold weights, place itself, move its inputs; what each
  method feeds to the weights and returns) or a `Dataset` (what `__getitem__` returns);
- a function: what it returns (a model or tensor it builds on the CPU is made, for the caller,
  at the call, and the fix goes there, as for a helper of the caller's own file);
- a constant: a device, a condition about CUDA, a loader.

Summaries never carry evidence (origins) into another file: an importer's edits go into the
importer. A value whose place depended on the exporting file's own evidence is exported as
unknown unless the importer can fix it at its own call. Everything here errs towards unknown:
a summary may only stop an edit or let the importer see what it already could for a helper
of its own file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Optional, Union

from devfix.analysis.values import GPU_SKIP, UNKNOWN, Kind, Origin, Place, Value, join

if TYPE_CHECKING:  # nodes only in annotations: the cache's and the workers' imports stay light
    import libcst as cst

MADE_BY_CALLEE = ("construct", "factory", "host")  # origins the caller can fix at its call


@dataclass(frozen=True)
class MethodSummary:
    params: tuple[str, ...]  # without `self`
    inputs: frozenset[str] = frozenset()  # parameters shown to meet the module's weights
    keeps: frozenset[str] = frozenset()  # parameters it moves itself or keeps on the host
    returns: Value | None = None
    relative: bool = False  # returns something on the module's own device
    device_params: frozenset[str] = frozenset()  # parameters it moves tensors to (`z.to(current_device)`)
    # parameters that switch its `.cuda()` on, each with whether its default does: `(name, on)`
    cuda_switches: frozenset[tuple[str, bool]] = frozenset()
    needs_gpu: bool = False  # it asks CUDA for something only a GPU has, whatever it is passed
    saves: frozenset[str] = frozenset()  # the checkpoint path shapes it writes (checkpoints.py)
    tuples: tuple[tuple[int, Value], ...] = ()  # the tuples it returns, by length, as a caller sees them


@dataclass(frozen=True)
class ClassSummary:
    node: cst.ClassDef
    kind: str  # "module" | "dataset" | "other"
    framework: bool = False
    opaque: bool = False
    places_itself: bool = False
    moves_inputs: bool = False
    has_state: bool = False
    held_params: frozenset[str] = frozenset()  # a wrapper's `__init__` parameters that hold its only weights
    buffers: frozenset[str] = frozenset()
    attrs: tuple[tuple[str, Value], ...] = ()
    methods: tuple[tuple[str, MethodSummary], ...] = ()
    element: Value | None = None  # dataset: what `__getitem__` returns
    path: str = ""  # the file that defines it
    # dataset: the one other file that names the class, whose loaders may take over the device
    # transfers of its `__getitem__` (DEV006 across files; "" when none may)
    moves_items_for: str = ""
    unmoved_element: Value | None = None  # what `__getitem__` returns without those transfers (on the host)

    def method(self, name: str) -> MethodSummary | None:
        return next((m for n, m in self.methods if n == name), None)


@dataclass(frozen=True)
class FunctionSummary:
    node: cst.FunctionDef
    params: tuple[str, ...]
    returns: Value | None = None
    path: str = ""  # the file that defines it
    keeps: frozenset[str] = frozenset()  # parameters it never moves (nor hands to other code)
    device_params: frozenset[str] = frozenset()  # parameters it moves tensors to
    # parameters that switch its `.cuda()` on, each with whether its default does: `(name, on)`
    cuda_switches: frozenset[tuple[str, bool]] = frozenset()
    needs_gpu: bool = False  # it asks CUDA for something only a GPU has, whatever it is passed
    owner: str = ""  # a class's `__init__`: the class it builds
    # the parameter whose truth moves `returns` to the device (`def gen_z(n, is_cuda)`), and
    # whether its default is `True`: each call's argument decides where the result lives
    switch: str = ""
    switch_default: bool = False
    saves: frozenset[str] = frozenset()  # the checkpoint path shapes it writes (checkpoints.py)
    # pairs of parameters it combines (`loss(outputs, labels)`): a call's arguments meet there
    meets: frozenset[tuple[str, str]] = frozenset()

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def key(self) -> str:
        """Its name for the callers' facts: `train`, or `Trainer.__init__`."""
        return f"{self.owner}.{self.name}" if self.owner else self.name


@dataclass(frozen=True)
class LoaderVerdict:
    """Not a function: a dataset class of `path` whose `__getitem__` transfers the loaders of
    another file may take over (DEV006 across files). That file reports, as if it called it,
    whether its loops move the batches (`{"batches": <a loader on the CPU or the device>}`);
    the class's file reads the joined verdict in its second pass."""

    path: str
    owner: str

    @property
    def key(self) -> str:
        return f"{self.owner}.<loaders>"  # never a method's name: no function is evaluated with it


Callee = Union["FunctionSummary", LoaderVerdict]

# What callers in other files pass to a file's functions: function name -> parameter -> the
# arguments joined over every such call (None: some call's arguments cannot be matched).
Incoming = dict[str, Optional[dict[str, Value]]]


def informative(value: Value) -> bool:
    """An argument worth evaluating a function of another file with: something devfix knows
    the place of (a module, tensor, loader or device), or the run's options."""
    if value.kind is Kind.OTHER and value.attrs:
        # the run's options (`args.device`, `args.cuda`, `type=bool, default=True`); a bare
        # constant is not: `Cuda = True` handed to a helper is the caller's switch to set
        return any(informative(v) or (v.kind is Kind.HOST and v.truth is not None) for _, v in value.attrs)
    if value.kind is Kind.HOST and value.flag == "fixed":
        return True  # `Corpus(cuda=config.cuda)`, an option the command line cannot turn off
    if value.kind is Kind.MODULE and not value.neutral:
        return True  # a model, wherever it is: `model.to(device)` there puts it on the device
    return value.kind in (Kind.MODULE, Kind.TENSOR, Kind.LOADER, Kind.DEVICE) and value.place in (
        Place.CPU,
        Place.DEVICE,
    )


def fingerprint(incoming: dict[str, dict[str, Value]] | None) -> tuple[object, ...]:
    """What a file's analysis can learn from its callers' arguments (`join_incoming`), without
    the syntax nodes and evidence each analysis makes anew: equal when another analysis with
    them would find the same."""
    if not incoming:
        return ()
    return tuple(
        (name, tuple((param, _facts(value)) for param, value in sorted(params.items())))
        for name, params in sorted(incoming.items())
    )


def _facts(value: Value | None) -> tuple[object, ...]:
    if value is None:
        return ()
    return (
        value.kind,
        value.place,
        value.flag,
        value.truth,
        value.cpu,
        value.neutral,
        value.scalar,
        value.dp,
        tuple((name, _facts(v)) for name, v in value.attrs),
        tuple(_facts(v) for v in value.items) if value.items is not None else None,
        _facts(value.element),
    )


Export = Union[ClassSummary, FunctionSummary, Value]


@dataclass
class ModuleSummary:
    path: str
    names: dict[str, Export] = field(default_factory=dict)


# (module, level, name) -> what that import binds, or None when it is not a project file's name.
# Asked for GPU_ON_IMPORT, a flag value where the module needs a GPU when it is imported.
GPU_ON_IMPORT = "<needs a GPU on import>"
Linker = Callable[[Optional[str], int, Optional[str]], Optional[Export]]


def exported(value: Value | None, *, returned: bool = False, collated: bool = False, depth: int = 0) -> Value:
    """`value` as another file may see it: no evidence of this file, nothing this file's flow
    alone decided. `returned`: a function's result, which the caller can fix at its call when
    the function built it on the CPU. `collated`: a dataset's item, whose CPU tensors a loader
    stacks into new ones (the evidence is then the importer's loop)."""
    if value is None or depth > 4:
        return UNKNOWN
    kind = value.kind
    if kind is Kind.HOST:
        return replace(_bare(value), place=Place.CPU)
    if kind is Kind.DEVICE:
        if value.flag in ("param", "relative") or value.place is Place.UNKNOWN:
            return Value(Kind.DEVICE, Place.UNKNOWN)
        return replace(_bare(value), attrs=())
    if kind is Kind.STRUCT:
        return _struct(value, collated, depth)
    if kind in (Kind.LOADER, Kind.DATASET):
        element = exported(value.element, collated=True, depth=depth + 1) if value.element is not None else None
        place = element.place if element is not None else Place.UNKNOWN
        return Value(kind, place if kind is Kind.LOADER or element is not None else Place.UNKNOWN, element=element)
    if kind is Kind.MODULE and value.neutral:
        return Value(Kind.MODULE, Place.CPU, neutral=True)  # a loss or an activation: meets any device
    if kind in (Kind.TENSOR, Kind.MODULE):
        if value.place is Place.DEVICE and not any(o.kind in ("module", "param") for o in value.origins):
            return replace(_bare(value), place=Place.DEVICE)
        if (
            value.place is Place.CPU
            and returned
            and value.origins
            and all(o.kind in MADE_BY_CALLEE for o in value.origins)
        ):
            origin = next(iter(value.origins))
            return replace(_bare(value), place=Place.CPU, origins=frozenset({Origin(origin.kind, origin.node)}))
        if value.place is Place.CPU and kind is Kind.TENSOR and collated:
            return replace(_bare(value), place=Place.CPU)  # collated batches: fresh CPU tensors
        return Value(kind, Place.UNKNOWN, neutral=value.neutral, attrs=value.attrs if kind is Kind.MODULE else ())
    if kind is Kind.OTHER and value.flag == GPU_SKIP:
        return Value(Kind.OTHER, Place.UNKNOWN, flag=GPU_SKIP)  # a test decorator that skips without a GPU
    if kind is Kind.OTHER and value.attrs:
        return Value(Kind.OTHER, Place.UNKNOWN, attrs=tuple((k, exported(v, depth=depth + 1)) for k, v in value.attrs))
    return UNKNOWN


def _bare(value: Value) -> Value:
    return replace(value, origins=frozenset(), obj=None, cls=None, ref=None, bound=None, param=None)


def _struct(value: Value, collated: bool, depth: int) -> Value:
    # items never keep evidence: only a whole value returned is re-made at the caller's call
    items = (
        tuple(exported(v, collated=collated, depth=depth + 1) for v in value.items) if value.items is not None else None
    )
    keys = tuple((k, exported(v, collated=collated, depth=depth + 1)) for k, v in value.keys) if value.keys else None
    element = exported(value.element, collated=collated, depth=depth + 1) if value.element is not None else None
    parts = [*(items or ()), *(v for _, v in keys or ())] or ([element] if element is not None else [])
    place = Place.NONE
    origins: frozenset[Origin] = frozenset()
    for part in parts:
        if part.kind in (Kind.TENSOR, Kind.STRUCT, Kind.MODULE):
            place = place.join(part.place)
            origins = origins | part.origins
    if place is Place.NONE:
        place = value.place if value.place is Place.CPU and not parts else Place.UNKNOWN
    return Value(
        Kind.STRUCT,
        place,
        origins if place is not Place.UNKNOWN else frozenset(),
        items=items,
        keys=keys,
        element=element,
    )


def join_incoming(
    calls: Iterable[tuple[Callee, dict[str, Value] | None]],
) -> dict[str, dict[str, dict[str, Value]]]:
    """The arguments of every cross-file call joined per callee (path -> function ->
    parameter), keeping the parameters every call agrees on something definite about; a
    function with a call whose arguments cannot be matched gets nothing."""
    joined: dict[str, dict[str, dict[str, Value] | None]] = {}
    counts: dict[tuple[str, str], int] = {}
    for summary, arguments in calls:
        functions = joined.setdefault(summary.path, {})
        name_key = summary.key
        key = (summary.path, name_key)
        counts[key] = counts.get(key, 0) + 1
        if name_key in functions and functions[name_key] is None:
            continue
        if arguments is None:
            functions[name_key] = None
            continue
        previous = functions.get(name_key)
        if previous is None:
            functions[name_key] = dict(arguments)
            continue
        functions[name_key] = {
            name: join(previous[name], value) for name, value in arguments.items() if name in previous
        }
    found: dict[str, dict[str, dict[str, Value]]] = {}
    for path, functions in joined.items():
        for name, arguments in functions.items():
            kept = {p: v for p, v in (arguments or {}).items() if informative(v)}
            if kept:
                found.setdefault(path, {})[name] = kept
    return found

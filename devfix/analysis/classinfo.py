"""What devfix knows of one class of the file: its bases, methods and attributes.

Built by `ClassFlow.define_class` (classes.py) and read by the flow and by the decisions
above it (devices.py, datasets.py, summarize.py, DEV013). Kept apart from the flow so that a
reader of a class's facts never imports the evaluator.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import libcst as cst

from devfix.analysis.linking import ClassSummary, MethodSummary
from devfix.analysis.scopes import dotted_name
from devfix.analysis.torch_api import CPU_TENSOR_TYPES, CUDA_TENSOR_TYPES
from devfix.analysis.tree import class_body_names, kept_parameters
from devfix.analysis.values import Kind, Origin, Place, Value, join


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    kind: str  # "module" | "dataset" | "other"
    framework: bool = False  # derives from a framework's class (LightningModule...): placed by it
    moved_whole: bool = False  # a framework's module (a `LightningModule`) that its trainer moves whole
    opaque: bool = False  # derives from a class devfix cannot see (another module's): it may be an nn.Module
    plain: bool = False  # an nn.Module subclass of this file's classes and nn.Module alone: no attribute but its own
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    attrs: dict[str, Value] = field(default_factory=dict)  # `self.x` values, joined over all writes
    writes: dict[str, list[tuple[cst.CSTNode, Value]]] = field(default_factory=dict)  # this pass
    writes_seen: dict[str, list[cst.CSTNode]] = field(default_factory=dict)  # the targets of the previous pass
    # attributes each write of which holds an object of a class devfix knows and reads as no
    # module (`self.f = STNFunction()` in one branch, `STNFunctionBCHW()` in the other)
    known_objects: frozenset[str] = frozenset()
    settled: bool = False  # `attrs` were settled once (at the end of a pass, or after its `__init__`)
    buffers: set[str] = field(default_factory=set)
    registers_by_hand: bool = False  # `__init__` registers layers itself (`self.add_module(...)`, `setattr(self, ...)`)
    moves_inputs: bool = False  # a method moves its tensor parameters itself (`x.to(self.device)`)
    places_itself: bool = False  # `__init__` puts layers on a device (`.to(device)`, `device=`)
    dynamic: bool = False  # a method sets attributes wholesale (`self.__dict__.update(locals())`)
    called_attrs: set[str] = field(default_factory=set)  # `self.x(...)`, `self.x.conv1(...)`: used as layers
    # class-body names bound to an object of a plain class of the run (`box_transform =
    # BoxTransform()` of a YOLO loss): that class, whose `__call__` a method's `self.x(...)` runs
    instances: dict[str, cst.ClassDef] = field(default_factory=dict)
    bases: tuple[ClassInfo, ...] = ()
    linked: ClassSummary | None = None  # a class of another project file, as its summary says

    @property
    def name(self) -> str:
        return self.node.name.value

    def linked_method(self, name: str) -> MethodSummary | None:
        """A method defined in another project file (by this class or a base), unless a class
        of this file overrides it."""
        if name in self.methods:
            return None
        if self.linked is not None:
            return self.linked.method(name)
        return _first(base.linked_method(name) for base in self.bases)

    def method(self, name: str) -> cst.FunctionDef | None:
        if name in self.methods:
            return self.methods[name]
        return _first(base.method(name) for base in self.bases)

    def attribute(self, name: str) -> Value | None:
        """What `self.name` holds, joined over the writes devfix sees; None when unknown,
        as for every attribute of a class that sets its attributes wholesale."""
        if self.sets_attributes_wholesale:
            return None
        if name in self.attrs:
            return self.attrs[name]
        return _first(base.attribute(name) for base in self.bases)

    def _tensor_type_attributes(self) -> set[str]:
        """Attributes kept from a constructor parameter whose default is a tensor type (a GAN
        loss's `tensor=torch.cuda.FloatTensor`, `self.Tensor = tensor`): a type called to build
        targets, not a layer handed in."""
        init = self.methods.get("__init__")
        if init is None:
            return set()
        typed = {
            p.name.value
            for p in (*init.params.params, *init.params.kwonly_params)
            if p.default is not None and dotted_name(p.default) in CPU_TENSOR_TYPES | CUDA_TENSOR_TYPES
        }
        return {attr for attr, param in kept_parameters(init).items() if param in typed} if typed else set()

    @property
    def sets_attributes_wholesale(self) -> bool:
        return self.dynamic or any(base.sets_attributes_wholesale for base in self.bases)

    @property
    def held_params(self) -> frozenset[str]:
        """The `__init__` parameters of a class whose only weights are the modules it is handed
        and keeps as they are (`self.model = model` in `SVI(model)`, a loss or inference
        wrapper): an instance lives where those arguments do. Empty for any other class."""
        if self.linked is not None:
            return self.linked.held_params
        if self.buffers or self.bases:
            return frozenset()
        passed = self.passed_attrs()
        held = set()
        for name, value in self.attrs.items():
            weighty = (value.kind is Kind.MODULE and not value.neutral) or (
                name in self.called_attrs and value.kind is Kind.OTHER and value.place is Place.UNKNOWN
            )
            if value.kind is Kind.TENSOR and (value.grad or value.member):
                return frozenset()
            if weighty:
                if name not in passed:
                    return frozenset()
                held.add(passed[name])
        return frozenset(held)

    def passed_attrs(self) -> dict[str, str]:
        """The attributes `__init__` sets straight from one of its parameters (`self.model =
        model`), which nothing else of the class writes: attribute -> parameter."""
        init = self.methods.get("__init__")
        if init is None:
            return {}
        found = kept_parameters(init)
        return {name: param for name, param in found.items() if len(self.writes_seen.get(name, [])) <= 1}

    @property
    def has_state(self) -> bool:
        """Owns layers, parameters or buffers: what `.to()` moves (else calling it never meets a
        weight of its own; a plain tensor attribute is DEV012's question)."""
        if self.linked is not None and self.linked.has_state:
            return True
        if self.buffers or any(
            (v.kind is Kind.MODULE and not v.neutral) or (v.kind is Kind.TENSOR and (v.grad or v.member))
            for v in self.attrs.values()
        ):
            return True
        types = self._tensor_type_attributes()
        if any(
            name in self.called_attrs
            and value.kind is Kind.OTHER
            and value.place is Place.UNKNOWN
            and value.qual is None
            and name not in self.known_objects  # not objects of classes devfix knows (`DistModel()`)
            and name not in types
            for name, value in self.attrs.items()
        ):
            return True  # `self.resnet = resnet`, called as a layer: a module passed in may hold weights
        return any(base.has_state for base in self.bases)


# Python >= 3.10 lists its standard library; on 3.9, the modules whose classes are commonly subclassed.
STDLIB = getattr(
    sys,
    "stdlib_module_names",
    frozenset(
        {
            "abc",
            "collections",
            "contextlib",
            "dataclasses",
            "enum",
            "json",
            "logging",
            "multiprocessing",
            "queue",
            "threading",
            "typing",
            "unittest",
            "argparse",
            "io",
            "string",
            "numbers",
            "types",
        }
    ),
)


def known_base(qual: str) -> bool:
    """A base class devfix knows is not a module: the standard library's, or torch's own."""
    top = qual.split(".")[0]
    return bool(top) and (top in STDLIB or top == "torch")


def through(cls: ClassInfo, value: Value) -> Value:
    """An attribute of an instance of `cls`. When the class derives from one devfix cannot see,
    the instance may be an `nn.Module` that is moved whole: its layers and tensors are where
    the instance is, which devfix does not know. A framework's module (a `LightningModule`)
    is moved whole by its trainer: its layers are where the trainer put them. Its plain tensor
    attributes are not registered, so they stay where they were made."""
    if cls.opaque and value.kind in (Kind.MODULE, Kind.TENSOR, Kind.STRUCT):
        return Value(value.kind, Place.UNKNOWN, neutral=value.neutral)
    if cls.moved_whole and value.kind is Kind.MODULE:
        return Value(value.kind, Place.UNKNOWN, neutral=value.neutral)
    return value


def registered_items(cls: ClassInfo, struct: Value, origin: Origin) -> Value:
    """`self.classifiers = [self.classifier1, self.classifier2]`: a plain list of layers that
    are also the module's attributes, registered there, so on the module's device."""
    registered = {v.obj for v in cls.attrs.values() if v.kind is Kind.MODULE and v.obj is not None}
    if not registered or not struct.items:
        return struct

    def placed(item: Value) -> Value:
        if item.kind is Kind.MODULE and item.obj in registered:
            return replace(item, place=Place.DEVICE, origins=frozenset({origin}), obj=None)
        return item

    items = tuple(placed(item) for item in struct.items)
    element = struct.element
    if element is not None and element.kind is Kind.MODULE:
        for item in items:
            element = item if element is struct.element else join(element, item)
    return replace(struct, items=items, element=element)


def defines_name(cls: ClassInfo, name: str) -> bool:
    return cls.method(name) is not None or cls.linked_method(name) is not None


_T = TypeVar("_T")


def _first(found: Iterable[_T | None]) -> _T | None:
    """The first answer of the bases, in their order, that is not None."""
    return next((item for item in found if item is not None), None)


def class_body_instances(
    node: cst.ClassDef, classes: dict[int, ClassInfo], evaluate: Callable[[cst.BaseExpression], Value]
) -> dict[str, cst.ClassDef]:
    """`box_transform = BoxTransform()` in a class body, of a plain class of the run (no
    module, no dataset, no base devfix cannot see): name -> that class."""
    found = {}
    for name, value in class_body_names(node):
        if not (isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute))):
            continue
        made = evaluate(value.func)
        klass = classes.get(id(made.ref)) if made.ref is not None else None
        if klass is not None and klass.kind == "other" and not klass.opaque:
            found[name] = klass.node
    return found

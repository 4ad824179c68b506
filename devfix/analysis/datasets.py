"""Where each data loader's data lives, and where it lives once devfix is done.

DEV004 (batch transfers), DEV005 (pin_memory), DEV006 (device work inside datasets) and
DEV014 (opt-in pinning) must agree on one placement per loader, or the fixed program pins
GPU data or moves batches twice. For each `DataLoader(...)` of the file this module finds
the transfers inside its dataset (a `TensorDataset` of moved tensors, `.to(device)` in a
`Dataset`'s `__init__`/`__getitem__`) and decides, for the chosen `dataset_placement` mode,
which of them leave the dataset (`hoist`), whether the data is on the device afterwards,
and whether the loader pins afterwards.

Hoisting is only certain when every loop that consumes the loader moves its batches after
the change; `FileFacts` checks that by evaluating the program once more with the hoisted
transfers taken away (`Program(assume_unmoved=...)`) and reading that plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from devfix.analysis import torch_api as api
from devfix.analysis.classinfo import ClassInfo
from devfix.analysis.linking import ClassSummary
from devfix.analysis.program import LoaderInfo, Program
from devfix.analysis.tree import Tree
from devfix.analysis.values import Kind, Place


@dataclass(eq=False)
class Transfer:
    """A `.to(device)` / `.cuda()` inside a dataset, and whether removing it is certain."""

    call: cst.Call  # the move; hoisting replaces it with its receiver
    where: str  # "TensorDataset" | "__init__" | "__getitem__"
    klass: ClassInfo | None = None
    reason: str | None = None  # why removing it is not certain (then: report only)
    # the `__getitem__` transfers of a dataset class of another file (`call` is then the
    # loader's own call, and that file removes them once told the loops take them over)
    linked: ClassSummary | None = None

    @property
    def key(self) -> int:
        """What the what-if run assumes away (`Program(assume_unmoved=...)`)."""
        return id(self.linked.node) if self.linked is not None else id(self.call)


@dataclass(eq=False)
class LoaderPlan:
    info: LoaderInfo
    transfers: list[Transfer] = field(default_factory=list)
    hoist: list[Transfer] = field(default_factory=list)  # DEV006 removes these
    blocked: list[Transfer] = field(default_factory=list)  # DEV006 reports these
    on_device_after: bool = False
    remove_pin: bool = False  # DEV005: pinning GPU data (the crash case)
    add_pin: bool = False  # DEV005: devfix writes the transfers, the fast way
    workers_on_device: bool = False  # workers over device data: report

    @property
    def call(self) -> cst.Call:
        return self.info.call

    @property
    def pins(self) -> bool:
        arg = self.info.pin
        return arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None"))

    @property
    def pins_after(self) -> bool:
        return (self.pins and not self.remove_pin) or self.add_pin


def transfers_of(tree: Tree, program: Program, info: LoaderInfo) -> list[Transfer]:
    """The device transfers inside the dataset a loader reads."""
    dataset = info.dataset
    if dataset.kind is not Kind.DATASET or dataset.obj is None:
        return []
    if dataset.obj in program.datasets:
        call, args = program.datasets[dataset.obj]
        found = []
        for arg, _ in args:
            transfer = _tensor_argument(tree, program, arg.value, call)
            if transfer is not None:
                found.append(transfer)
        return found
    klass = program.classes.get(id(dataset.cls)) if dataset.cls is not None else None
    if klass is None:
        return []
    linked = klass.linked
    if linked is not None:
        if linked.kind == "dataset" and linked.moves_items_for and linked.moves_items_for == program.path:
            return [Transfer(info.call, "__getitem__", klass, linked=linked)]
        return []
    return class_transfers(tree, program, klass)


def class_transfers(tree: Tree, program: Program, klass: ClassInfo) -> list[Transfer]:
    """The device transfers in a dataset class's `__init__` and `__getitem__`."""
    found = []
    for name in ("__init__", "__getitem__", "__getitems__"):
        method = klass.methods.get(name)
        if method is None:
            continue
        where = "__init__" if name == "__init__" else "__getitem__"
        for call in tree.data.calls:
            if (
                tree.is_inside(call, method)
                and _is_move(call)
                and not _dtype_only(program, call)
                and tree.enclosing(call, cst.FunctionDef) is method
            ):
                found.append(Transfer(call, where, klass, _certainty(tree, call, where)))
    return found


def _is_move(call: cst.Call) -> bool:
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in api.MOVE_METHODS:
        return False
    if func.attr.value == "cuda":
        return True
    return bool(call.args)


def _dtype_only(program: Program, call: cst.Call) -> bool:
    """`.to(torch.float)`, `.to(dtype=torch.long)`: a change of type, no transfer (as calls.move
    reads it: ogb's `MyDataset` converts its features in `__init__`)."""
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
        return False
    positional = [arg for arg in call.args if arg.keyword is None]
    if not positional:
        return not isinstance(call.func, cst.Attribute) or call.func.attr.value != "cuda"
    value = program.values.get(id(positional[0].value))
    return value is not None and value.qual is not None and api.is_dtype(value.qual)


def _tensor_argument(tree: Tree, program: Program, value: cst.BaseExpression, dataset: cst.Call) -> Transfer | None:
    if isinstance(value, cst.Call) and _is_move(value) and _moves_device(program, value):
        return Transfer(value, "TensorDataset")
    inner = _inner_move(value)
    if inner is not None and _moves_device(program, inner):
        return Transfer(inner, "TensorDataset", reason="the tensor is transformed after it is moved")
    if isinstance(value, cst.Name):
        for binding in tree.scope_of(dataset).lookup(value.value) or ():
            if isinstance(binding.value, cst.Call):
                move = _inner_move(binding.value)
                if move is not None and _moves_device(program, move):
                    return Transfer(
                        move,
                        "TensorDataset",
                        reason=f"'{value.value}' is moved where it is defined and may be used elsewhere",
                    )
    return None


def _moves_device(program: Program, call: cst.Call) -> bool:
    value = program.values.get(id(call))
    return value is not None and value.place is Place.DEVICE


def _inner_move(expr: cst.BaseExpression) -> cst.Call | None:
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if _is_move(expr):
            return expr
        expr = expr.func.value
    return None


def _certainty(tree: Tree, call: cst.Call, where: str) -> str | None:
    """None when removing the move leaves the same computation on the CPU."""
    parent = tree.parent(call)
    if isinstance(parent, (cst.Attribute, cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.Subscript)):
        return "the tensor is transformed after it is moved"
    if isinstance(parent, cst.Arg):
        return "the moved tensor is passed on to other code"
    if isinstance(parent, cst.Assign) and where == "__init__":
        for target in parent.targets:
            if not (
                isinstance(target.target, cst.Attribute)
                and isinstance(target.target.value, cst.Name)
                and target.target.value.value == "self"
            ):
                return "the moved tensor is kept in a local variable"
    return None


def plan_loaders(tree: Tree, program: Program, placement: str) -> dict[int, LoaderPlan]:
    """Which transfers each loader's dataset should lose (before knowing whether the loops
    can take them over: see `FileFacts`)."""
    plans: dict[int, LoaderPlan] = {}
    for key, info in program.loaders.items():
        plan = LoaderPlan(info, transfers_of(tree, program, info))
        for transfer in plan.transfers:
            if transfer.where == "__getitem__":
                wanted = True  # per-item device work: wrong in both modes
            else:
                wanted = placement == "pinned" and (plan.pins or info.workers)
            if not wanted:
                continue
            if transfer.reason is None:
                plan.hoist.append(transfer)
            else:
                plan.blocked.append(transfer)
        plans[key] = plan
    return plans


def settle(plan: LoaderPlan, placement: str, loops_move: bool, writes_transfers: bool) -> None:
    """The loader's final placement once the consuming loops are known to move (or not)."""
    if not loops_move:
        for transfer in plan.hoist:
            transfer.reason = (
                transfer.reason or "the loader's batches are consumed where devfix cannot see them being moved"
            )
        plan.blocked.extend(plan.hoist)
        plan.hoist = []
    stays = [t for t in plan.transfers if t.where != "__getitem__" and t not in plan.hoist]
    plan.on_device_after = bool(stays) or (plan.info.dataset.place is Place.DEVICE and not plan.transfers)
    plan.remove_pin = plan.pins and plan.on_device_after
    plan.workers_on_device = plan.info.workers and plan.on_device_after
    plan.add_pin = (
        placement == "pinned"
        and plan.info.pin is None
        and not plan.info.spread
        and not plan.on_device_after
        and (writes_transfers or bool(plan.hoist))
    )

"""Where each data loader's data lives, and where it will live once devfix is done.

DEV004 (batch transfers), DEV005 (pin_memory), DEV006 (device work inside datasets) and
DEV014 (opt-in pinning) must agree on one placement per loader, or the fixed program pins
GPU data or moves batches twice. This module decides it once per file:

- `LoaderSite`: one `DataLoader(...)` call of this file, its dataset (a `TensorDataset(...)`
  or an instance of a `Dataset` subclass of this file), whether it pins / uses workers, the
  loops that consume it (directly, through a loader-building function, or through a helper
  that receives it as a parameter), and the transfers inside its dataset.
- the plan for the chosen `dataset_placement` mode: which transfers DEV006 hoists out of
  the dataset (certain ones only), whether the data is on the device afterwards, whether
  the loader pins afterwards (DEV005 adds or removes `pin_memory`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, List, Optional, Tuple

import libcst as cst

from devfix.analysis.loops import BatchLoop

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.facts import FileFacts

TENSOR_DATASETS = {"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"}


@dataclass(eq=False)
class Transfer:
    """A `.to(device)` / `.cuda()` inside a dataset, and whether it can be hoisted."""

    call: cst.Call  # the move call; hoisting replaces it with its receiver
    where: str  # "TensorDataset" | "__init__" | "__getitem__"
    reason: Optional[str] = None  # why hoisting is not certain (then: report, no fix)


@dataclass(eq=False)
class LoaderSite:
    call: cst.Call
    dataset: Optional[cst.BaseExpression]  # the dataset expression, resolved through a name
    dataset_class: Optional[cst.ClassDef] = None
    transfers: List[Transfer] = field(default_factory=list)
    loops: List[BatchLoop] = field(default_factory=list)
    escapes: bool = False  # the loader goes somewhere devfix cannot follow
    pin_arg: Optional[cst.Arg] = None
    workers: bool = False
    spread: bool = False  # `DataLoader(ds, **kwargs)`: pin_memory may be in there
    # the plan ---------------------------------------------------------------------------
    hoist: List[Transfer] = field(default_factory=list)  # DEV006 fixes these
    blocked: List[Transfer] = field(default_factory=list)  # DEV006 reports these
    on_device_after: bool = False
    remove_pin: bool = False  # DEV005: pinning GPU data (the crash case)
    add_pin: bool = False  # DEV005: devfix writes the transfers, the fast way
    workers_on_device: bool = False  # device mode with workers over device data: report

    @property
    def pins(self) -> bool:
        arg = self.pin_arg
        return arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None"))

    @property
    def pins_after(self) -> bool:
        return (self.pins and not self.remove_pin) or self.add_pin


class DataAnalysis:
    def __init__(self, facts: "FileFacts", placement: str) -> None:
        self.facts = facts
        self.placement = placement

    # -- finding loaders and what feeds them ------------------------------------------------
    def sites(self) -> List[LoaderSite]:
        facts = self.facts
        found: List[LoaderSite] = []
        for call in facts.data.calls:
            if facts.qualname(call.func, at=call) not in ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"):
                continue
            site = LoaderSite(call, self._dataset_expr(call))
            site.pin_arg = _keyword(call, "pin_memory")
            workers = _keyword(call, "num_workers")
            site.workers = workers is not None and not (isinstance(workers.value, cst.Integer) and workers.value.value == "0")
            site.spread = any(arg.star == "**" for arg in call.args)
            self._dataset_transfers(site)
            self._consumers(site)
            self._plan(site)
            found.append(site)
        return found

    def _dataset_expr(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        arg = _keyword(call, "dataset") or next((a for a in call.args if a.keyword is None and not a.star), None)
        if arg is None:
            return None
        return self._resolve(arg.value, call)

    def _resolve(self, expr: cst.BaseExpression, at: cst.CSTNode) -> cst.BaseExpression:
        if isinstance(expr, cst.Name):
            bindings = self.facts.bindings_at(expr.value, at)
            if bindings and len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
                return bindings[0].value
        return expr

    def _dataset_transfers(self, site: LoaderSite) -> None:
        facts = self.facts
        dataset = site.dataset
        if not isinstance(dataset, cst.Call):
            return
        qual = facts.qualname(dataset.func, at=dataset)
        if qual in TENSOR_DATASETS:
            for arg in dataset.args:
                self._tensor_argument(site, arg.value, dataset)
            return
        name = dataset.func.value if isinstance(dataset.func, cst.Name) else None
        klass = facts.dataset_classes.get(name or "")
        if klass is None or not facts.bindings_at(name, dataset) or facts.bindings_at(name, dataset)[0].kind != "class":  # type: ignore[index]
            return
        site.dataset_class = klass
        for method in _methods(klass, ("__init__", "__getitem__", "__getitems__")):
            where = "__init__" if method.name.value == "__init__" else "__getitem__"
            for call in facts.data.calls:
                if facts.is_inside(call, method) and facts.loop_analysis.is_move_call(call):
                    site.transfers.append(Transfer(call, where, self._certainty(call, method, where)))

    def _tensor_argument(self, site: LoaderSite, value: cst.BaseExpression, dataset: cst.Call) -> None:
        facts = self.facts
        analysis = facts.loop_analysis
        if isinstance(value, cst.Call) and analysis.is_move_call(value):
            site.transfers.append(Transfer(value, "TensorDataset"))
            return
        if isinstance(value, cst.Call) and _chain_has_move(value, analysis):
            site.transfers.append(Transfer(_inner_move(value, analysis), "TensorDataset", "the tensor is transformed after it is moved"))
            return
        if isinstance(value, cst.Name):
            bindings = facts.bindings_at(value.value, dataset) or []
            for binding in bindings:
                if binding.value is not None and isinstance(binding.value, cst.Call) and _chain_has_move(binding.value, analysis):
                    move = _inner_move(binding.value, analysis)
                    site.transfers.append(Transfer(move, "TensorDataset", f"'{value.value}' is moved where it is defined and may be used elsewhere"))
                    return

    def _certainty(self, call: cst.Call, method: cst.FunctionDef, where: str) -> Optional[str]:
        """None when removing the move leaves the same computation on the CPU."""
        facts = self.facts
        parent = facts.parent(call)
        if isinstance(parent, cst.Attribute) or (isinstance(parent, cst.Arg) and not isinstance(facts.parent(parent), cst.Call)):
            return "the tensor is transformed after it is moved"
        if isinstance(parent, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.Subscript)):
            return "the tensor is transformed after it is moved"
        if isinstance(parent, cst.Arg):
            return "the moved tensor is passed on to other code"
        if isinstance(parent, cst.Assign) and where == "__init__":
            for target in parent.targets:
                if not _is_self_attribute(target.target):
                    return "the moved tensor is kept in a local variable"
        return None

    # -- who consumes the loader -------------------------------------------------------------
    def _consumers(self, site: LoaderSite) -> None:
        facts = self.facts
        parent = facts.parent(site.call)
        holder: Optional[Tuple[str, cst.CSTNode]] = None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            holder = (parent.targets[0].target.value, parent)
        elif isinstance(parent, cst.Return):
            function = facts.enclosing(parent, (cst.FunctionDef,))
            holder = self._built_by(function) if function is not None else None
        if holder is None:
            site.escapes = True
            return
        self._follow(site, holder[0], holder[1], depth=0)

    def _built_by(self, function: cst.FunctionDef) -> Optional[Tuple[str, cst.CSTNode]]:
        """`train_loader = make_loader(...)`: the one variable a loader-building function feeds."""
        facts = self.facts
        found = None
        for assign in facts.data.assigns:
            value = assign.value
            if isinstance(value, cst.Call) and facts.local_function(value) is function:
                if found is not None or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
                    return None
                found = (assign.targets[0].target.value, assign)
        return found

    def _follow(self, site: LoaderSite, name: str, binding_node: cst.CSTNode, depth: int) -> None:
        facts = self.facts
        scope = facts.binding_scope(facts.scope_of(binding_node), name)
        if scope is None or depth > 2:
            site.escapes = True
            return
        for batch in facts.batch_loops:
            expr = batch.loader_expr
            if isinstance(expr, cst.Name) and expr.value == name and facts.binding_scope(facts.scope_of(expr), name) is scope:
                site.loops.append(batch)
        for call, position in facts.calls_passing(name, scope):
            callee = call.func.value if isinstance(call.func, cst.Name) else None
            if callee in ("len", "iter", "enumerate", "print", "tqdm", "trange") or facts.is_inside(call, binding_node):
                continue
            function = facts.local_function(call)
            params = function.params.params if function is not None else ()
            if function is None or position < 0 or position >= len(params):
                site.escapes = True
                continue
            self._follow(site, params[position].name.value, params[position], depth + 1)

    # -- the plan --------------------------------------------------------------------------------
    def _plan(self, site: LoaderSite) -> None:
        feeds_loops = bool(site.loops) and not site.escapes
        consumers_move = feeds_loops and all(batch.moved or batch.needs_transfer for batch in site.loops)
        for transfer in site.transfers:
            hoistable = transfer.reason is None and consumers_move
            if transfer.where == "__getitem__":
                wanted = True  # per-item device work: wrong in both modes
            else:
                wanted = self.placement == "pinned" and (site.pins or site.workers)
            if not wanted:
                continue
            if hoistable:
                site.hoist.append(transfer)
            else:
                if transfer.reason is None:
                    transfer.reason = "the loader's batches are consumed where devfix cannot see them move"
                site.blocked.append(transfer)
        stays = [t for t in site.transfers if t.where != "__getitem__" and t not in site.hoist]
        site.on_device_after = bool(stays)
        site.remove_pin = site.pins and site.on_device_after
        site.workers_on_device = site.workers and site.on_device_after
        # DEV004 writes transfers only in a program that places something (see Rule.applies_to)
        loop_transfers = self.facts.places_tensors and any(batch.needs_transfer for batch in site.loops)
        writes_transfers = loop_transfers or bool(site.hoist)
        site.add_pin = (
            self.placement == "pinned"
            and site.pin_arg is None
            and not site.spread
            and not site.on_device_after
            and feeds_loops
            and writes_transfers
        )


def _keyword(call: cst.Call, name: str) -> Optional[cst.Arg]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _methods(klass: cst.ClassDef, names: Tuple[str, ...]) -> List[cst.FunctionDef]:
    body = klass.body.body if isinstance(klass.body, cst.IndentedBlock) else ()
    return [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value in names]


def _is_self_attribute(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def _chain_has_move(expr: cst.BaseExpression, analysis) -> bool:
    return _inner_move(expr, analysis) is not None


def _inner_move(expr: cst.BaseExpression, analysis) -> Optional[cst.Call]:
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        if analysis.is_move_call(expr):
            return expr
        expr = expr.func.value
    return None

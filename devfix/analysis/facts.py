"""FileFacts: what devfix knows about one module, computed once and read by every rule.

Built from the single pass in `collect.py`. Derived facts (models, optimizers, loaders,
loops over loaders, device variables) are computed on first use and cached, so a file no
rule asks about costs one parse and one visit. Rules that need a new fact add it here,
where the next rule finds it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from devfix.analysis.collect import collect
from devfix.analysis.data import DataAnalysis, LoaderSite
from devfix.analysis.loops import BatchLoop, LoopAnalysis, LoopFactory, SlicedBatch
from devfix.analysis.scopes import Binding, Scope, dotted_name, iter_names, resolve

# Names that say "this holds a device" on their own (spec principle 6).
DEVICE_NAME = re.compile(r"^(device|dev|DEVICE|DEV|[A-Za-z_]*_device|device_[A-Za-z_]*)$")
# Names of parameters/attributes that say "this is a data loader" (spec DEV004).
LOADER_NAME = re.compile(r"^(?:[a-z_]*_)?(?:loader|dataloader|data_loader|dl|iterator)(?:_[a-z_]+)?$|^[a-z]+_?(?:loader|dl)$")
# Parameter names that say "this is the model" when nothing else does.
MODEL_PARAM_NAME = re.compile(r"^(model|net|network|module|classifier|encoder|decoder|generator|discriminator|net[GD]|policy|actor|critic|[a-z_]*_model|model_[a-z_]*)$")
# Methods that return the same module (or a tensor) on another device or dtype.
CHAIN_METHODS = {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_", "share_memory"}
LOSS_WEIGHT_KEYWORDS = ("weight", "pos_weight")
VIEW_METHODS = {"view", "reshape", "unsqueeze", "squeeze", "expand", "repeat", "contiguous", "long", "int", "bool", "transpose", "permute", "t", "clone", "detach"}
DTYPES = {"float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8", "int16", "int32", "int64", "long", "uint8", "bool", "complex64", "complex128", "short"}
WRAPPERS = {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel"}
NOT_MODULES = {"Parameter", "Module", "DataParallel", "ParameterList", "ParameterDict", "UninitializedParameter", "UninitializedBuffer"}
DATALOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
# Frameworks that place models and batches themselves, and multi-process code that picks a
# device per rank: devfix leaves their files alone.
SELF_PLACING = ("accelerate", "lightning", "pytorch_lightning", "deepspeed", "ignite", "fastai", "torch.distributed", "torch.multiprocessing")
# Words in a condition that say "this branch runs only where there is a GPU".
GPU_GUARD_WORDS = ("cuda", "gpu", "accel")


@dataclass(eq=False)
class Model:
    """A variable bound to a module instance: built at `binding`, in `scope`."""

    name: str
    scope: Scope
    binding: Binding
    call: cst.Call  # the constructor call inside the binding's value
    kind: str  # "model" (module or layer) | "loss"


@dataclass(eq=False)
class Optimizer:
    call: cst.Call
    model_names: Tuple[str, ...]
    scope: Scope


@dataclass(eq=False)
class Loader:
    name: str
    call: cst.Call
    scope: Scope
    binding: Binding

    def keyword(self, name: str) -> Optional[cst.Arg]:
        return keyword_arg(self.call, name)


@dataclass(eq=False)
class LoaderLoop:
    """A `for` loop whose iterable is (a wrapper around) a data loader."""

    node: cst.For
    loader_expr: cst.BaseExpression
    loader: Optional[Loader]  # when the loader's `DataLoader(...)` call is in this file
    scope: Scope


@dataclass(frozen=True)
class DeviceRef:
    """A device expression in reach at some node: `device`, `args.device`, `self.device`."""

    code: str
    kind: str  # "variable" | "parameter" | "attribute" | "argument" | "planned"


@dataclass(eq=False)
class DeviceRequest:
    """A scope that needs a device declaration DEV001 will insert."""

    scope: Scope
    code: str  # the declaration's right-hand side, e.g. `next(model.parameters()).device`
    needs_torch_import: bool
    anchor: cst.BaseStatement  # the declaration goes right after (or before) this statement
    before: bool
    node: cst.CSTNode  # the first node that needed it (where DEV001 reports)
    users: List[str] = field(default_factory=list)  # rule codes that asked


def keyword_arg(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def string_value(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        try:
            value = expr.evaluated_value
        except Exception:  # noqa: BLE001 - odd prefixes: treat as unknown
            return None
        return value if isinstance(value, str) else None
    return None


def unwrap_chain(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`Net().to(device).float()` -> `Net()`: strip device/dtype method chains."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in CHAIN_METHODS
    ):
        expr = expr.func.value
    return expr


def root_name(expr: cst.BaseExpression) -> Optional[str]:
    """The variable a method chain or attribute access starts from: `model.fc.to()` -> model."""
    while True:
        if isinstance(expr, cst.Call):
            expr = expr.func
        elif isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Name):
            return expr.value
        else:
            return None


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_import_or_docstring(statement: cst.BaseStatement, first: bool) -> bool:
    if first and _is_docstring(statement):
        return True
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
    if isinstance(statement, cst.Try):
        return all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, (cst.Import, cst.ImportFrom)) for x in s.body) for s in statement.body.body)
    return False


class FileFacts:
    def __init__(self, module: cst.Module, *, allow_device_declarations: bool = True, device_style: str = "conditional", dataset_placement: str = "pinned") -> None:
        self.module = module
        self.dataset_placement = dataset_placement
        self.data = collect(module)
        self.allow_device_declarations = allow_device_declarations
        self.device_style = device_style
        self.device_requests: Dict[int, DeviceRequest] = {}
        self._positions = None

    # -- tree navigation ---------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.data.parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def is_inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        return any(candidate is ancestor for candidate in self.ancestors(node))

    def order(self, node: cst.CSTNode) -> int:
        return self.data.order[id(node)]

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        """The statement (line or compound statement) that contains `node`."""
        current: Optional[cst.CSTNode] = node
        while current is not None:
            if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return current
            current = self.parent(current)
        return None

    def enclosing(self, node: cst.CSTNode, types) -> Optional[cst.CSTNode]:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, types):
                return ancestor
        return None

    def scope_of(self, node: cst.CSTNode) -> Scope:
        for ancestor in self.ancestors(node):
            scope = self.data.scopes.get(id(ancestor))
            if scope is not None:
                return scope
        return self.data.module_scope

    def function_scope_of(self, node: cst.CSTNode) -> Scope:
        """The innermost function (or module) scope: class bodies and lambdas don't count."""
        scope = self.scope_of(node)
        while scope.kind in ("class", "lambda") and scope.parent is not None:
            scope = scope.parent
        return scope

    def block_of(self, scope: Scope) -> Sequence[cst.BaseStatement]:
        node = scope.node
        if isinstance(node, cst.Module):
            return node.body
        body = getattr(node, "body", None)
        if isinstance(body, cst.IndentedBlock):
            return body.body
        return ()

    # -- names -------------------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> Optional[str]:
        scope = self.scope_of(at if at is not None else expr)
        return resolve(expr, scope)

    def bindings_at(self, name: str, node: cst.CSTNode) -> Optional[List[Binding]]:
        return self.scope_of(node).lookup(name)

    @cached_property
    def torch_name(self) -> Optional[str]:
        """The module-level name bound to `torch` itself (`torch`, or `T` for `import torch as T`)."""
        for name, bindings in self.data.module_scope.bindings.items():
            if any(b.kind == "import" and b.qualname == "torch" for b in bindings):
                if len(bindings) == 1 or all(b.kind == "import" for b in bindings):
                    return name
        return None

    @cached_property
    def uses_torch(self) -> bool:
        return any(
            b.kind == "import" and b.qualname and b.qualname.split(".")[0] == "torch"
            for scope in self.data.scopes.values()
            for bindings in scope.bindings.values()
            for b in bindings
        )

    @cached_property
    def self_placing_framework(self) -> bool:
        """The file uses a framework that moves models and batches itself."""
        return any(
            b.kind == "import" and b.qualname and any(b.qualname == p or b.qualname.startswith(p + ".") for p in SELF_PLACING)
            for scope in self.data.scopes.values()
            for bindings in scope.bindings.values()
            for b in bindings
        )

    @cached_property
    def places_tensors(self) -> bool:
        """Whether the program puts anything on a device at all.

        A program that never does (no device variable, no `.to(...)`/`.cuda()`, no `device=`)
        is consistent: everything lives on the CPU. devfix does not turn CPU-only programs
        into GPU programs; it fixes programs that place some things and not others.
        """
        if any(self.device_bindings(scope) for scope in self.data.scopes.values()):
            return True
        for call in self.data.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "cuda":
                return True
            if isinstance(func, cst.Attribute) and func.attr.value == "to" and call.args and not self._is_dtype(call.args[0].value):
                return True
            if keyword_arg(call, "device") is not None:
                return True
        return False

    def _is_dtype(self, expr: cst.BaseExpression) -> bool:
        qual = self.qualname(expr, at=expr) or ""
        return qual.startswith("torch.") and qual.split(".")[-1] in DTYPES

    def moved_on_creation(self, call: cst.Call) -> bool:
        """`torch.zeros(...).to(device)`, `.cuda()`, `.type_as(x)`, also through `.float()` or
        `.view(...)`: the new tensor is placed at once, whatever device it was created on."""
        node: cst.CSTNode = call
        while True:
            attribute = self.parent(node)
            method = self.parent(attribute) if isinstance(attribute, cst.Attribute) else None
            if not (isinstance(method, cst.Call) and method.func is attribute and attribute.value is node):
                return False
            name = attribute.attr.value
            if name in ("cuda", "type_as") or (name == "to" and not (method.args and self._is_dtype(method.args[0].value))):
                return True
            if name not in CHAIN_METHODS and name not in VIEW_METHODS:
                return False
            node = method

    def under_gpu_guard(self, node: cst.CSTNode) -> bool:
        """`node` runs only where a GPU exists: inside `if torch.cuda.is_available():`,
        `if use_cuda:`, `if device.type == "cuda":`, `if args.gpu is not None:` (either branch).

        A heuristic on the condition's names, by design: any condition about CUDA, GPUs or
        accelerators means the author already chose what happens without one.
        """
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and self._mentions_gpu(ancestor.test):
                return True
        return False

    def _mentions_gpu(self, test: cst.BaseExpression) -> bool:
        code = self.module.code_for_node(test).lower()
        return any(word in code for word in GPU_GUARD_WORDS)

    @cached_property
    def prefers_single_quotes(self) -> bool:
        return self.data.single_quotes > self.data.double_quotes

    def quote(self, text: str) -> str:
        return f"'{text}'" if self.prefers_single_quotes else f'"{text}"'

    # -- classes -----------------------------------------------------------------------
    def _classes_deriving(self, roots: Tuple[str, ...]) -> Dict[str, cst.ClassDef]:
        """Classes of this file deriving (directly or through each other) from `roots`."""
        found: Dict[str, cst.ClassDef] = {}
        changed = True
        while changed:
            changed = False
            for node in self.data.classes:
                name = node.name.value
                if name in found:
                    continue
                for base in node.bases:
                    qual = self.qualname(base.value, at=node)
                    local = dotted_name(base.value)
                    if (qual and (qual in roots or self._is_torch_nn_module_class(qual, roots))) or local in found:
                        found[name] = node
                        changed = True
                        break
        return found

    @staticmethod
    def _is_torch_nn_module_class(qual: str, roots: Tuple[str, ...]) -> bool:
        # Subclassing any torch.nn layer (nn.Sequential, nn.LSTM) makes a module too.
        if "torch.nn.Module" not in roots:
            return False
        parts = qual.split(".")
        return qual.startswith("torch.nn.") and parts[-1][:1].isupper() and parts[-1] not in ("Parameter",)

    @cached_property
    def model_classes(self) -> Dict[str, cst.ClassDef]:
        return self._classes_deriving(("torch.nn.Module", "torch.nn.modules.module.Module"))

    @cached_property
    def dataset_classes(self) -> Dict[str, cst.ClassDef]:
        return self._classes_deriving(
            ("torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset")
        )

    @cached_property
    def self_placing_classes(self) -> Dict[str, cst.ClassDef]:
        """Model classes whose `__init__` places its own layers (`.to(device)`, `device=`)."""
        found = {}
        for name, node in self.model_classes.items():
            init = next((f for f in self.data.functions if f.name.value == "__init__" and self.class_of_method(f) is node), None)
            if init is None:
                continue
            for call in self.data.calls:
                func = call.func
                moves = isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda")
                if (moves or keyword_arg(call, "device") is not None) and self.is_inside(call, init):
                    found[name] = node
                    break
        return found

    def class_of_method(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        parent = self.parent(function)
        if isinstance(parent, cst.IndentedBlock):
            owner = self.parent(parent)
            if isinstance(owner, cst.ClassDef):
                return owner
        return None

    # -- modules, optimizers, loaders ----------------------------------------------------
    def module_kind(self, call: cst.Call) -> Optional[str]:
        """"model" / "loss" when `call` builds an nn.Module; None otherwise."""
        qual = self.qualname(call.func, at=call)
        if qual is None:
            name = dotted_name(call.func)
            if name in self.model_classes and self.qualname(call.func, at=call) is None:
                bindings = self.bindings_at(name, call)
                if bindings and all(b.kind == "class" for b in bindings):
                    return "model"
            return None
        parts = qual.split(".")
        last = parts[-1]
        if qual.startswith("torch.nn.") and last[:1].isupper() and last not in NOT_MODULES and "functional" not in parts and "init" not in parts and "utils" not in parts:
            if qual in WRAPPERS:
                return None
            return "loss" if last.endswith("Loss") else "model"
        if qual.startswith("torchvision.models.") and len(parts) >= 3:
            return "model"
        if qual == "timm.create_model":
            return "model"
        return None

    def wrapped_model_call(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[cst.Call]:
        """The module constructor inside `Net()`, `Net().to(d)`, `nn.DataParallel(Net())`."""
        expr = unwrap_chain(expr)
        if not isinstance(expr, cst.Call):
            return None
        if self.qualname(expr.func, at=at) in WRAPPERS and expr.args:
            return self.wrapped_model_call(expr.args[0].value, at)
        if self.module_kind(expr) is not None:
            return expr
        return None

    @cached_property
    def optimizers(self) -> List[Optimizer]:
        found = []
        for call in self.data.calls:
            qual = self.qualname(call.func, at=call)
            if not qual or not qual.startswith("torch.optim."):
                continue
            last = qual.split(".")[-1]
            if not last[:1].isupper() or "lr_scheduler" in qual or "swa_utils" in qual:
                continue
            names = tuple(self._parameter_owners(call))
            found.append(Optimizer(call, names, self.scope_of(call)))
        return found

    def _parameter_owners(self, node: cst.CSTNode) -> Iterator[str]:
        """Names X in `X.parameters()` / `X.named_parameters()` inside an optimizer call."""
        for call in self.data.calls:
            if (
                isinstance(call.func, cst.Attribute)
                and call.func.attr.value in ("parameters", "named_parameters")
                and isinstance(call.func.value, cst.Name)
                and self.is_inside(call, node)
            ):
                yield call.func.value.value

    @cached_property
    def models(self) -> List[Model]:
        """Every variable bound to a module instance, once, at its first construction."""
        found: Dict[Tuple[int, str], Model] = {}
        for scope in self.data.scopes.values():
            if scope.kind == "class":
                continue
            for name, bindings in scope.bindings.items():
                for binding in bindings:
                    if binding.kind != "assign" or binding.value is None:
                        continue
                    call = self.wrapped_model_call(binding.value, binding.node)
                    if call is None:
                        continue
                    kind = self.module_kind(call) or "model"
                    found.setdefault((id(scope), name), Model(name, scope, binding, call, kind))
                    break
        # Objects whose parameters feed an optimizer are models even when their class is
        # defined elsewhere (`from mymodels import Net`).
        for optimizer in self.optimizers:
            for name in optimizer.model_names:
                bindings = optimizer.scope.lookup(name)
                if not bindings:
                    continue
                scope = self.binding_scope(optimizer.scope, name)
                if scope is None or (id(scope), name) in found:
                    continue
                first = next((b for b in bindings if b.kind == "assign" and isinstance(unwrap_chain(b.value), cst.Call)), None)
                if first is not None and (self.qualname(unwrap_chain(first.value).func, at=first.node) or "").startswith("torch."):
                    continue  # `fully_shard(model)`, `torch.compile(model)`: wraps a model placed elsewhere
                if first is not None:
                    found[(id(scope), name)] = Model(name, scope, first, unwrap_chain(first.value), "model")
        return sorted(found.values(), key=lambda m: m.binding.order)

    def binding_scope(self, scope: Scope, name: str) -> Optional[Scope]:
        current: Optional[Scope] = scope
        while current is not None:
            if name in current.bindings:
                return current
            current = current.visible_parent()
        return None

    def references(self, name: str, scope: Scope) -> Iterator[cst.Call]:
        """Calls anywhere whose receiver chain starts at variable `name` of `scope`."""
        for call in self.data.calls:
            if root_name(call.func) != name:
                continue
            if self.binding_scope(self.scope_of(call), name) is scope:
                yield call

    def calls_passing(self, name: str, scope: Scope) -> Iterator[Tuple[cst.Call, int]]:
        """Calls that receive variable `name` of `scope` as an argument (call, position)."""
        for call in self.data.calls:
            for index, arg in enumerate(call.args):
                if isinstance(arg.value, cst.Name) and arg.value.value == name:
                    if self.binding_scope(self.scope_of(call), name) is scope:
                        yield call, (index if arg.keyword is None else -1)

    def returned(self, name: str, scope: Scope) -> bool:
        """Whether variable `name` of `scope` is returned or yielded (it escapes to the caller)."""
        for node in self.data.returns:
            value = getattr(node, "value", None)
            if value is None or self.function_scope_of(node) is not scope:
                continue
            if any(n.value == name for n in iter_names(value)):
                return True
        return False

    def local_function(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        if not isinstance(call.func, cst.Name):
            return None
        bindings = self.bindings_at(call.func.value, call)
        if bindings and len(bindings) == 1 and bindings[0].kind == "def":
            return bindings[0].node  # type: ignore[return-value]
        return None

    @cached_property
    def loaders(self) -> List[Loader]:
        found = []
        for scope in self.data.scopes.values():
            for name, bindings in scope.bindings.items():
                for binding in bindings:
                    if binding.kind == "assign" and isinstance(binding.value, cst.Call):
                        if self.qualname(binding.value.func, at=binding.node) in DATALOADERS:
                            found.append(Loader(name, binding.value, scope, binding))
        return sorted(found, key=lambda loader: loader.binding.order)

    def loader_for(self, expr: cst.BaseExpression) -> Tuple[bool, Optional[Loader]]:
        """Is `expr` a data loader? And its `DataLoader(...)` call, when in this file."""
        if isinstance(expr, cst.Call) and self.qualname(expr.func, at=expr) in DATALOADERS:
            return True, None
        if isinstance(expr, cst.Name):
            scope = self.binding_scope(self.scope_of(expr), expr.value)
            for loader in self.loaders:
                if loader.name == expr.value and loader.scope is scope:
                    return True, loader
            bindings = self.bindings_at(expr.value, expr)
            if bindings and any(b.kind in ("param", "loop") for b in bindings):
                return bool(LOADER_NAME.match(expr.value)), None
            if bindings and all(b.kind == "assign" for b in bindings):
                return False, None
            return bool(LOADER_NAME.match(expr.value)), None
        if isinstance(expr, cst.Attribute):
            return bool(LOADER_NAME.match(expr.attr.value)), None
        return False, None

    @staticmethod
    def unwrap_iterable(expr: cst.BaseExpression) -> cst.BaseExpression:
        """`enumerate(tqdm(loader, desc=...), 1)` -> `loader`."""
        while isinstance(expr, cst.Call) and expr.args:
            name = dotted_name(expr.func)
            if name is None or name.split(".")[-1] not in ("enumerate", "tqdm", "trange", "iter", "progress_bar", "track"):
                break
            expr = expr.args[0].value
        return expr

    @cached_property
    def loader_loops(self) -> List[LoaderLoop]:
        found = []
        for loop in self.data.for_loops:
            inner = self.unwrap_iterable(loop.iter)
            is_loader, loader = self.loader_for(inner)
            if is_loader:
                found.append(LoaderLoop(loop, inner, loader, self.scope_of(loop)))
        return found

    # -- per-loop facts (devfix/analysis/loops.py) -----------------------------------------
    @cached_property
    def loop_analysis(self) -> "LoopAnalysis":
        return LoopAnalysis(self)

    @cached_property
    def batch_loops(self) -> List[BatchLoop]:
        """Loops over loaders (`for`, and `next(it)` over `iter(loader)`) with their batch facts."""
        return self.loop_analysis.batch_loops()

    @cached_property
    def loops_needing_transfer(self) -> List[BatchLoop]:
        """Loops whose batches are not moved and that DEV004 moves: not those whose loader's
        data stays on the device (dataset_placement = "device")."""
        if not self.places_tensors:
            return []  # a program that places nothing: DEV004 leaves its loops alone
        return [
            batch for batch in self.batch_loops
            if batch.needs_transfer and not (self.loader_site(batch) is not None and self.loader_site(batch).on_device_after)
        ]

    @cached_property
    def loader_sites(self) -> List[LoaderSite]:
        """Every `DataLoader(...)` call with its dataset, consumers and placement plan."""
        return DataAnalysis(self, self.dataset_placement).sites()

    def loader_site(self, batch: BatchLoop) -> Optional[LoaderSite]:
        return next((site for site in self.loader_sites if any(b is batch for b in site.loops)), None)

    @cached_property
    def sliced_batches(self) -> List[SlicedBatch]:
        return self.loop_analysis.sliced_batches()

    @cached_property
    def loop_factories(self) -> List[LoopFactory]:
        return self.loop_analysis.loop_factories(self.batch_loops)

    def loader_pins(self, loader: Optional[Loader]) -> bool:
        """The loader's `DataLoader(...)` call in this file pins (or may pin: `pin_memory=use_cuda`)."""
        if loader is None:
            return False
        arg = loader.keyword("pin_memory")
        return arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value in ("False", "None"))

    # -- devices -----------------------------------------------------------------------
    def is_device_value(self, expr: Optional[cst.BaseExpression], at: cst.CSTNode) -> bool:
        """`torch.device(...)`, `"cuda" if ... else "cpu"`, `x.device`, `torch.accelerator...`."""
        if expr is None:
            return False
        if isinstance(expr, cst.IfExp):
            return self.is_device_value(expr.body, at) or self.is_device_value(expr.orelse, at)
        text = string_value(expr)
        if text is not None:
            return text.split(":")[0] in ("cuda", "cpu", "mps", "xpu")
        if isinstance(expr, cst.Call):
            qual = self.qualname(expr.func, at=at) or ""
            return qual == "torch.device" or qual.startswith("torch.accelerator.")
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "device"
        return False

    def device_bindings(self, scope: Scope) -> List[Binding]:
        """Bindings in `scope` that hold a device, in textual order."""
        found = []
        for name, bindings in scope.bindings.items():
            for binding in bindings:
                if binding.kind == "param" and DEVICE_NAME.match(name):
                    found.append(binding)
                elif binding.kind == "assign" and (
                    name in ("device", "dev", "DEVICE") or self.is_device_value(binding.value, binding.node)
                ):
                    found.append(binding)
        found.sort(key=lambda b: (b.name != "device", b.order))
        return found

    @cached_property
    def argparse_device(self) -> Optional[str]:
        """`args.device` when a parser defines `--device` and `args = parser.parse_args()`."""
        has_option = any(
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "add_argument"
            and any(string_value(arg.value) in ("--device", "-device") for arg in call.args if arg.keyword is None)
            for call in self.data.calls
        )
        if not has_option:
            return None
        for call in self.data.calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parse_args", "parse_known_args"):
                parent = self.parent(call)
                if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
                    return parent.targets[0].target.value
        return None

    def self_device_attribute(self, scope: Scope) -> Optional[str]:
        """`self.device` inside a method of a class that sets or defines `device`."""
        function = scope.function
        klass = scope.enclosing_class
        if function is None or klass is None:
            return None
        params = function.params.params
        if not params or params[0].name.value != "self":
            return None
        if "device" in klass.bindings:  # a `device` property or class attribute
            return "self.device"
        for assign in self.data.assigns:
            for target in assign.targets:
                t = target.target
                if (
                    isinstance(t, cst.Attribute)
                    and t.attr.value == "device"
                    and isinstance(t.value, cst.Name)
                    and t.value.value == "self"
                    and self.is_inside(assign, klass.node)
                ):
                    return "self.device"
        return None

    def device_at(self, node: cst.CSTNode) -> Optional[DeviceRef]:
        """The device expression in reach at `node`, or None when the scope has none."""
        innermost = self.function_scope_of(node)
        position = self.order(node)
        scope: Optional[Scope] = innermost
        while scope is not None:
            for binding in self.device_bindings(scope):
                if scope is innermost and binding.kind == "assign" and binding.order > position:
                    continue
                if scope is not innermost and scope.kind == "module" and self.parent(self.statement_of(binding.node)) is not self.module:
                    continue  # set under `if __name__ == "__main__":`: not there when imported
                return DeviceRef(binding.name, "parameter" if binding.kind == "param" else "variable")
            attribute = self.self_device_attribute(scope)
            if attribute:
                return DeviceRef(attribute, "attribute")
            scope = scope.visible_parent()
        args = self.argparse_device
        if args is not None and self.binding_scope(innermost, args) is not None:
            return DeviceRef(f"{args}.device", "argument")
        planned: Optional[Scope] = innermost
        while planned is not None:
            # A declaration planned for this function, or for the module (it goes after the
            # imports, so every function sees it when it runs).
            if id(planned) in self.device_requests and (planned is innermost or planned.kind == "module"):
                return DeviceRef("device", "planned")
            planned = planned.visible_parent()
        return None

    def need_device(self, node: cst.CSTNode, rule: str) -> Optional[DeviceRef]:
        """The device in reach at `node`; if there is none, plan one (DEV001 inserts it).

        Returns None when no device can be provided safely; the caller then reports
        without a fix.
        """
        found = self.device_at(node)
        if found is not None:
            if found.kind == "planned":
                scope: Optional[Scope] = self.function_scope_of(node)
                while scope is not None and id(scope) not in self.device_requests:
                    scope = scope.visible_parent()
                if scope is not None:
                    self.device_requests[id(scope)].users.append(rule)
            return found
        if not self.allow_device_declarations:
            return None
        scope = self.function_scope_of(node)
        if scope.kind != "module" and scope.function is None:
            return None
        if scope.lookup("device") and self.binding_scope(scope, "device") is scope:
            return None  # `device` already means something else here
        code = self._declaration_code(scope)
        place = self._declaration_place(scope, node)
        if code is None or place is None:
            return None
        anchor, before = place
        needs_import = self.torch_name is None and code.startswith("torch.")
        if needs_import and self.leading_imports_end() is None:
            return None
        self.device_requests[id(scope)] = DeviceRequest(scope, code, needs_import, anchor, before, node, [rule])
        return DeviceRef("device", "planned")

    def _declaration_place(self, scope: Scope, node: cst.CSTNode) -> Optional[Tuple[cst.BaseStatement, bool]]:
        """Where DEV001 can declare a device for `scope` so that `node` sees it.

        Module: after the leading imports (and after `import torch` wherever it is), as long
        as that is before `node`. Function: first statement of the body, after a docstring.
        """
        block = self.block_of(scope)
        if not block:
            return None
        if scope.kind == "module":
            anchor = self.leading_imports_end()
            torch_import = self._torch_import_statement()
            if torch_import is not None and (anchor is None or self.order(torch_import) > self.order(anchor)):
                anchor = torch_import
            if anchor is None or self.order(anchor) > self.order(node):
                return None
            return anchor, False
        first = block[0]
        if _is_import_or_docstring(first, True) and _is_docstring(first):
            return first, False
        return first, True

    def leading_imports_end(self) -> Optional[cst.BaseStatement]:
        """The last statement of the module's leading block of imports (and docstring)."""
        anchor = None
        body = self.module.body
        for statement in body:
            if not _is_import_or_docstring(statement, statement is body[0]):
                break
            anchor = statement
        return anchor

    def _torch_import_statement(self) -> Optional[cst.BaseStatement]:
        if self.torch_name is None:
            return None
        for binding in self.data.module_scope.bindings[self.torch_name]:
            statement = self.statement_of(binding.node)
            if statement is not None and self.parent(statement) is self.module:
                return statement
        return None

    def declaration_code_at(self, node: cst.CSTNode) -> Optional[str]:
        """The right-hand side DEV001 would declare for `node`'s scope (None: none possible)."""
        return self._declaration_code(self.function_scope_of(node))

    def _declaration_code(self, scope: Scope) -> Optional[str]:
        torch_name = self.torch_name or "torch"
        if self.torch_name is None and "torch" in self.data.module_scope.bindings:
            return None  # `torch` means something else in this file
        function = scope.function
        if function is not None:
            klass = self.class_of_method(function)
            params = function.params.params
            if klass is not None and klass.name.value in self.model_classes and params and params[0].name.value == "self":
                return "next(self.parameters()).device"
            for param in params:
                if MODEL_PARAM_NAME.match(param.name.value):
                    return f"next({param.name.value}.parameters()).device"
        if self.device_style == "accelerator":
            return (
                f"{torch_name}.accelerator.current_accelerator() if {torch_name}.accelerator.is_available() "
                f"else {torch_name}.device({self.quote('cpu')})"
            )
        return f"{torch_name}.device({self.quote('cuda')} if {torch_name}.cuda.is_available() else {self.quote('cpu')})"

    # -- positions (only for what is reported) -------------------------------------------
    def position(self, node: cst.CSTNode) -> Tuple[int, int]:
        """1-based line and column of `node`; computed for the whole file on first use only."""
        if self._positions is None:
            self._positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        found = self._positions.get(node)
        if found is None:
            for ancestor in self.ancestors(node):
                found = self._positions.get(ancestor)
                if found is not None:
                    break
        if found is None:
            return (1, 1)
        return (found.start.line, found.start.column + 1)

    # -- tensors and module attributes (devfix/analysis/tensors.py) ------------------------
    @cached_property
    def module_classes(self):
        """Per nn.Module subclass: methods, `self.x` writes/reads, buffers, tensor-used names."""
        from devfix.analysis.tensors import module_classes

        return module_classes(self)

    @cached_property
    def tensor_flow(self):
        """Which expressions may hold device tensors / tensors that require grad."""
        from devfix.analysis.tensors import TensorFlow

        return TensorFlow(self)

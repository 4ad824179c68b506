"""Tensors and modules: facts DEV007, DEV009, DEV010, DEV012 and DEV013 read.

Three kinds of fact live here, all derived from the one pass in `collect.py` plus, for the
bodies of `nn.Module` subclasses only, one small visit that records `self.<attr>` reads and
writes and the names a method uses as tensors:

* `ModuleClass`: per nn.Module subclass of the file, its methods, the attributes written in
  them, their reads, the buffers it registers and whether it surely owns parameters.
* `TensorFlow`: which expressions of a function may hold a tensor on the device (model
  outputs, moved tensors, anything computed from them) and which may require grad,
  followed through the assignments of the function in textual order.
* small helpers: tensor factories, "is this a tensor-valued expression", "does this
  `torch.load` result feed `load_state_dict`".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

import libcst as cst

from devfix.analysis.scopes import MOVE_METHODS, Binding, dotted_name

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.facts import FileFacts

# Factories that create a new tensor on the default (CPU) device unless given `device=`.
TENSOR_FACTORIES = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "range",
    "eye", "linspace", "logspace", "tensor", "tril_indices", "triu_indices", "empty_strided",
}
# torch functions whose result is a tensor built from tensors (for "is this a tensor?").
TENSOR_FUNCTIONS = TENSOR_FACTORIES | {
    "tril", "triu", "exp", "log", "sin", "cos", "sqrt", "cat", "stack", "outer", "matmul",
    "einsum", "from_numpy", "as_tensor", "clone", "where", "pow", "abs", "softmax", "sigmoid", "tanh",
    "masked_fill", "unsqueeze", "reshape", "flatten", "diag", "cumsum", "bernoulli", "normal",
}
# Tensor methods whose result is not a tensor: they end a tensor expression.
NON_TENSOR_METHODS = {"item", "tolist", "numpy", "size", "dim", "numel", "__len__", "register_hook", "data_ptr"}
# Tensor methods (and torch functions) whose result never requires grad.
NO_GRAD_METHODS = {
    "detach", "argmax", "argmin", "argsort", "eq", "ne", "gt", "lt", "ge", "le", "long", "int",
    "bool", "sign", "round", "isnan", "isinf", "nonzero", "byte", "floor", "ceil",
}
TENSOR_ATTRIBUTES = {"device", "shape", "size", "dtype", "dim", "view", "reshape", "unsqueeze", "squeeze", "transpose", "permute", "contiguous", "float", "long", "new_zeros", "new_ones", "new_full", "new_empty", "type_as", "masked_fill", "expand", "repeat", "numel"}
# Layers that surely own parameters (for `next(self.parameters())`).
PARAMETRIZED_LAYERS = {
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "MultiheadAttention", "Transformer",
    "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer", "PReLU",
}
NO_GRAD_CONTEXTS = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
HOST_LIBRARIES = ("numpy", "sklearn", "scipy", "pandas")


def method_name(call: cst.BaseExpression) -> Optional[str]:
    """`x.foo(...)` -> "foo"; anything else -> None."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    return None


def self_attribute(expr: cst.BaseExpression, self_name: str) -> Optional[str]:
    """`self.mask` -> "mask" (for the method's own first parameter)."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == self_name:
        return expr.attr.value
    return None


@dataclass(eq=False)
class AttributeWrite:
    method: cst.FunctionDef
    statement: cst.SimpleStatementLine  # the line holding the assignment
    assign: Optional[cst.Assign]  # a plain `self.x = value` (None for augmented/tuple/other writes)
    attr: str
    value: Optional[cst.BaseExpression]


@dataclass(eq=False)
class ModuleClass:
    """What devfix knows about one nn.Module subclass of the file."""

    node: cst.ClassDef
    methods: Dict[str, cst.FunctionDef] = field(default_factory=dict)
    writes: List[AttributeWrite] = field(default_factory=list)
    reads: Dict[str, List[cst.Attribute]] = field(default_factory=dict)  # `self.x` loads, by attr
    buffers: List[str] = field(default_factory=list)  # names given to register_buffer
    buffer_calls: List[cst.Call] = field(default_factory=list)
    super_init: Optional[cst.Call] = None  # `super().__init__()` in __init__
    # per method: names used as tensors (`x.device`, `x.size()`, `self.layer(x)`, torch.f(x))
    tensor_names: Dict[int, Set[str]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.node.name.value

    def writes_of(self, attr: str) -> List[AttributeWrite]:
        return [write for write in self.writes if write.attr == attr]

    @property
    def init_writes(self) -> List[AttributeWrite]:
        """`self.x = ...` assignments made in `__init__` (what DEV012 and DEV013 inspect)."""
        init = self.methods.get("__init__")
        return [write for write in self.writes if init is not None and write.method is init]


def self_name_of(method: cst.FunctionDef) -> Optional[str]:
    """The name of a method's instance parameter; None for static/class methods."""
    for decorator in method.decorators:
        if dotted_name(decorator.decorator) in ("staticmethod", "classmethod"):
            return None
    params = method.params.params
    return params[0].name.value if params else None


@dataclass(eq=False)
class _Method:
    """A method of a module class being read, with its preorder range in the file."""

    info: ModuleClass
    node: cst.FunctionDef
    self_name: str
    start: int
    end: int
    tensor_names: Set[str]


def module_classes(facts: "FileFacts") -> Dict[str, ModuleClass]:
    """What each nn.Module subclass writes, reads, registers and treats as tensors.

    Read from the lists the analysis pass already collected (assignments, `x.attr`
    attributes, calls), each node attributed to the method it is directly in by its
    preorder index: no second walk over the class bodies.
    """
    found: Dict[str, ModuleClass] = {}
    methods: List[_Method] = []
    for name, node in facts.model_classes.items():
        info = ModuleClass(node)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                info.methods[statement.name.value] = statement
                self_name = self_name_of(statement)
                if self_name is not None:
                    names = info.tensor_names.setdefault(id(statement), set())
                    methods.append(_Method(info, statement, self_name, facts.order(statement), facts.data.end_order[id(statement)], names))
        found[name] = info
    if methods:
        _MethodReader(facts, methods).read()
    return found


class _MethodReader:
    """Fills ModuleClass records from the collected node lists (see `module_classes`)."""

    def __init__(self, facts: "FileFacts", methods: List[_Method]) -> None:
        self.facts = facts
        self.methods = methods
        self.targets: Set[int] = set()

    def method_of(self, node: cst.CSTNode) -> Optional[_Method]:
        """The method `node` is directly in (not in a function or class nested in it)."""
        order = self.facts.order(node)
        for method in self.methods:
            if method.start < order <= method.end:
                owner = self.facts.enclosing(node, (cst.FunctionDef, cst.ClassDef))
                return method if owner is method.node else None
        return None

    def read(self) -> None:
        data = self.facts.data
        for small in [*data.assigns, *data.other_assigns]:
            method = self.method_of(small)
            if method is not None:
                self._record_assignment(method, small)
        for attribute in data.name_attributes:
            method = self.method_of(attribute)
            if method is not None:
                self._record_attribute(method, attribute)
        for call in data.calls:
            method = self.method_of(call)
            if method is not None:
                self._record_call(method, call)

    def _record_assignment(self, method: _Method, small: cst.CSTNode) -> None:
        line = self.facts.parent(small)
        if isinstance(small, cst.Assign):
            plain = len(small.targets) == 1
            for target in small.targets:
                self._record_target(method, line, small if plain else None, target.target, small.value if plain else None)
        else:
            self._record_target(method, line, None, small.target, None)

    def _record_target(self, method: _Method, line, assign, target, value) -> None:
        attr = self_attribute(target, method.self_name)
        if attr is not None:
            self.targets.add(id(target))
            method.info.writes.append(AttributeWrite(method.node, line, assign, attr, value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._record_target(method, line, None, element.value, None)

    def _record_attribute(self, method: _Method, node: cst.Attribute) -> None:
        attr = self_attribute(node, method.self_name)
        if attr is not None and id(node) not in self.targets:
            method.info.reads.setdefault(attr, []).append(node)
        if isinstance(node.value, cst.Name) and node.attr.value in TENSOR_ATTRIBUTES:
            method.tensor_names.add(node.value.value)

    def _record_call(self, method: _Method, node: cst.Call) -> None:
        func = node.func
        info = method.info
        if self_attribute(func, method.self_name) == "register_buffer" and node.args:
            name = node.args[0].value
            if isinstance(name, cst.SimpleString):
                info.buffers.append(name.evaluated_value)
                info.buffer_calls.append(node)
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and method.node.name.value == "__init__":
            receiver = func.value
            if (isinstance(receiver, cst.Call) and dotted_name(receiver.func) == "super") or (
                node.args and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == method.self_name
            ):
                info.super_init = info.super_init or node
        # `self.layer(x)` and `torch.f(x)`: x is a tensor
        positional = [arg.value for arg in node.args if arg.keyword is None]
        if positional and isinstance(positional[0], cst.Name):
            qual = self.facts.qualname(func, at=node) or ""
            if self_attribute(func, method.self_name) is not None or (
                qual.startswith("torch.") and qual.split(".")[-1][:1].islower()
                and qual.split(".")[-1] not in TENSOR_FACTORIES and not qual.startswith("torch.cuda")
            ):
                method.tensor_names.add(positional[0].value)


def surely_has_parameters(facts: "FileFacts", info: ModuleClass) -> bool:
    """Whether `next(self.parameters())` cannot raise StopIteration for this class."""
    for write in info.writes:
        value = write.value
        if isinstance(value, cst.Call):
            qual = facts.qualname(value.func, at=value) or ""
            if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return True
            if qual.startswith("torch.nn.") and qual.split(".")[-1] in PARAMETRIZED_LAYERS:
                return True
    return False


def factory_name(facts: "FileFacts", call: cst.Call) -> Optional[str]:
    """"zeros" for `torch.zeros(...)` (through any import alias); None for anything else."""
    qual = facts.qualname(call.func, at=call)
    if qual and qual.startswith("torch.") and qual.count(".") == 1 and qual[6:] in TENSOR_FACTORIES:
        return qual[6:]
    return None


def is_tensor_expr(facts: "FileFacts", expr: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether `expr` surely evaluates to a tensor: torch factories/functions, methods on them,
    arithmetic and indexing on them, and local names bound to them in the same function."""
    if depth > 12:
        return False
    if isinstance(expr, cst.Call):
        qual = facts.qualname(expr.func, at=expr) or ""
        if qual.startswith("torch.") and qual.count(".") == 1 and qual[6:] in TENSOR_FUNCTIONS:
            return True
        if isinstance(expr.func, cst.Attribute) and qual == "":
            if expr.func.attr.value in NON_TENSOR_METHODS:
                return False
            return is_tensor_expr(facts, expr.func.value, depth + 1)
        return False
    if isinstance(expr, cst.BinaryOperation):
        return is_tensor_expr(facts, expr.left, depth + 1) or is_tensor_expr(facts, expr.right, depth + 1)
    if isinstance(expr, cst.Subscript):
        return is_tensor_expr(facts, expr.value, depth + 1)
    if isinstance(expr, cst.Name):
        value = latest_value(facts, expr)
        return value is not None and is_tensor_expr(facts, value, depth + 1)
    return False


def _preceding_bindings(facts: "FileFacts", name: cst.Name) -> List[Binding]:
    scope = facts.function_scope_of(name)
    bindings = scope.bindings.get(name.value, [])
    position = facts.order(name)
    return [b for b in bindings if b.order < position and not facts.is_inside(name, b.node)]


def latest_binding(facts: "FileFacts", name: cst.Name) -> Optional[Binding]:
    """The last binding of `name` in its own function that textually precedes it."""
    found = _preceding_bindings(facts, name)
    return max(found, key=lambda b: b.order) if found else None


def latest_value(facts: "FileFacts", name: cst.Name) -> Optional[cst.BaseExpression]:
    binding = latest_binding(facts, name)
    if binding is None or binding.kind != "assign":
        return None
    return binding.value


def element_value(binding: Binding, name: str) -> Tuple[Optional[cst.BaseExpression], int]:
    """For `a, b = x, y` the value bound to `name` (`y`, -1); for `a, b = f()`, (`f()`, index)."""
    node = binding.node
    if binding.kind == "assign":
        return binding.value, -1
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None, -1
    target = node.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None, -1
    for index, element in enumerate(target.elements):
        if isinstance(element.value, cst.Name) and element.value.value == name:
            if isinstance(node.value, (cst.Tuple, cst.List)) and len(node.value.elements) == len(target.elements):
                return node.value.elements[index].value, -1
            return node.value, index
    return None, -1


class TensorFlow:
    """Which expressions may hold a device tensor / a tensor that requires grad.

    Sources: calls of a model (a variable bound to a module, a `model`-like parameter or
    `self.model`), attributes of a model (`model.fc.weight`), `.to(...)`/`.cuda()` moves.
    Everything computed from a source is tainted too, through assignments of the same
    function in textual order; `.cpu()` ends "device", `.detach()`/`.data`/no_grad end "grad".
    """

    def __init__(self, facts: "FileFacts") -> None:
        self.facts = facts
        self._memo: Dict[Tuple[int, str], bool] = {}

    def on_device(self, expr: cst.BaseExpression) -> bool:
        return self._taint(expr, "device", 0)

    def requires_grad(self, expr: cst.BaseExpression) -> bool:
        return self._taint(expr, "grad", 0)

    def _taint(self, expr: cst.BaseExpression, kind: str, depth: int) -> bool:
        key = (id(expr), kind)
        if key not in self._memo:
            self._memo[key] = False  # cycles: assume clean
            self._memo[key] = self._compute(expr, kind, depth)
        return self._memo[key]

    def _compute(self, expr: cst.BaseExpression, kind: str, depth: int) -> bool:
        if depth > 30:
            return False
        if isinstance(expr, cst.Name):
            return self._name(expr, kind, depth)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            if attr in ("shape", "device", "dtype", "ndim") or (attr == "data" and kind == "grad"):
                return False
            if self.is_model_root(expr):
                return True  # `model.fc.weight`
            if attr in ("data", "T", "mT", "grad", "real"):
                return self._taint(expr.value, kind, depth + 1)
            return False
        if isinstance(expr, cst.Subscript):
            if kind == "grad" and _indices_of_reduction(self.facts, expr):
                return False  # `torch.max(out, 1)[1]`
            return self._taint(expr.value, kind, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self._taint(expr.left, kind, depth + 1) or self._taint(expr.right, kind, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self._taint(expr.expression, kind, depth + 1)
        if isinstance(expr, cst.Comparison):
            if kind == "grad":
                return False
            return self._taint(expr.left, kind, depth + 1) or any(self._taint(c.comparator, kind, depth + 1) for c in expr.comparisons)
        if isinstance(expr, cst.Call):
            return self._call(expr, kind, depth)
        return False

    def _call(self, call: cst.Call, kind: str, depth: int) -> bool:
        facts = self.facts
        if self.is_model(call.func):
            return kind == "device" or not self.in_no_grad(call)
        method = method_name(call)
        qual = facts.qualname(call.func, at=call) or ""
        if qual:
            if not qual.startswith("torch.") or qual.count(".") != 1:
                return False
            function = qual[6:]
            if function in TENSOR_FACTORIES:
                device = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "device"), None)
                return kind == "device" and device is not None and not _is_cpu(device)
            if kind == "grad" and (function in NO_GRAD_METHODS or self.in_no_grad(call)):
                return False
            return any(self._taint(arg.value, kind, depth + 1) for arg in call.args if arg.keyword is None)
        if method is None:
            return False
        receiver = call.func.value  # type: ignore[attr-defined]
        if method in NON_TENSOR_METHODS:
            return False
        if method == "cpu":
            return kind == "grad" and self._taint(receiver, kind, depth + 1)
        if method in MOVE_METHODS and self.moves_device(call):
            if kind == "device":
                return not _is_cpu(call.args[0].value)
            return self._taint(receiver, kind, depth + 1)
        if kind == "grad" and (method in NO_GRAD_METHODS or self.in_no_grad(call)):
            return False
        return self._taint(receiver, kind, depth + 1)

    def _name(self, name: cst.Name, kind: str, depth: int) -> bool:
        binding = latest_binding(self.facts, name)
        if binding is None:
            return False
        value, index = element_value(binding, name.value)
        if value is None:
            return False
        if kind == "grad":
            if self.in_no_grad(binding.node):
                return False
            if index > 0 and _is_reduction_with_indices(self.facts, value):
                return False  # the indices of `_, preds = torch.max(out, 1)`
        return self._taint(value, kind, depth + 1)

    def moves_device(self, call: cst.Call) -> bool:
        """`.cuda()`, `.to(device)`, `.to(other_tensor)` — not `.to(torch.uint8)` / `.to(dtype=...)`."""
        if method_name(call) == "cuda":
            return True
        first = call.args[0] if call.args else None
        if first is None or first.keyword is not None and first.keyword.value != "device":
            return False
        qual = self.facts.qualname(first.value, at=call) or ""
        return not (qual.startswith("torch.") and qual != "torch.device" and not isinstance(first.value, cst.Call))

    def is_model(self, expr: cst.BaseExpression) -> bool:
        """A variable bound to a module, a `model`-like parameter, or `self.model`."""
        from devfix.analysis.facts import MODEL_PARAM_NAME

        facts = self.facts
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return bool(MODEL_PARAM_NAME.match(expr.attr.value))
        if not isinstance(expr, cst.Name):
            return False
        scope = facts.binding_scope(facts.scope_of(expr), expr.value)
        if scope is None:
            return False
        for model in facts.models:
            if model.name == expr.value and model.scope is scope and model.kind == "model":
                return True
        bindings = scope.bindings.get(expr.value, [])
        return bool(bindings) and all(b.kind == "param" for b in bindings) and bool(MODEL_PARAM_NAME.match(expr.value))

    def is_model_root(self, expr: cst.Attribute) -> bool:
        inner: cst.BaseExpression = expr
        while isinstance(inner, cst.Attribute):
            inner = inner.value
            if self.is_model(inner):
                return True
        return False

    def in_no_grad(self, node: cst.CSTNode) -> bool:
        facts = self.facts
        for ancestor in facts.ancestors(node):
            if isinstance(ancestor, cst.With):
                for item in ancestor.items:
                    target = item.item.func if isinstance(item.item, cst.Call) else item.item
                    if facts.qualname(target, at=ancestor) in NO_GRAD_CONTEXTS:
                        return True
            if isinstance(ancestor, cst.FunctionDef):
                for decorator in ancestor.decorators:
                    target = decorator.decorator
                    target = target.func if isinstance(target, cst.Call) else target
                    if facts.qualname(target, at=ancestor) in NO_GRAD_CONTEXTS:
                        return True
        return False


REDUCTIONS_WITH_INDICES = ("max", "min", "topk", "sort", "mode", "median", "kthvalue")


def _is_reduction_with_indices(facts: "FileFacts", value: cst.BaseExpression) -> bool:
    """`torch.max(out, 1)` / `out.topk(k)`: a (values, indices) pair."""
    if not isinstance(value, cst.Call):
        return False
    qual = facts.qualname(value.func, at=value)
    if qual is not None:
        return qual in {f"torch.{name}" for name in REDUCTIONS_WITH_INDICES}
    return method_name(value) in REDUCTIONS_WITH_INDICES and len(value.args) > 0


def _indices_of_reduction(facts: "FileFacts", expr: cst.Subscript) -> bool:
    if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return False
    index = expr.slice[0].slice.value
    return isinstance(index, cst.Integer) and index.value == "1" and _is_reduction_with_indices(facts, expr.value)


def _is_cpu(expr: cst.BaseExpression) -> bool:
    from devfix.analysis.facts import string_value

    if isinstance(expr, cst.Call) and expr.args:
        expr = expr.args[0].value  # torch.device("cpu")
    return string_value(expr) == "cpu"


def host_function(facts: "FileFacts", call: cst.Call) -> Optional[str]:
    """The qualified name when `call` calls into NumPy / scikit-learn / SciPy / pandas.

    A name imported from one of them under a try/except fallback (`except ImportError: def
    accuracy_score(...)`) still counts: both definitions take host (NumPy) arrays.
    """
    qual = facts.qualname(call.func, at=call)
    if qual is None and isinstance(call.func, cst.Name):
        bindings = facts.bindings_at(call.func.value, call) or []
        imported = [b.qualname for b in bindings if b.kind == "import" and b.qualname]
        qual = imported[0] if imported else None
    if qual and qual.split(".")[0] in HOST_LIBRARIES:
        return qual
    return None


def feeds_load_state_dict(facts: "FileFacts", call: cst.Call) -> bool:
    """`m.load_state_dict(torch.load(f))`, or `ckpt = torch.load(f)` then `m.load_state_dict(ckpt[...])`."""
    parent = facts.parent(call)
    if isinstance(parent, cst.Arg):
        outer = facts.parent(parent)
        return method_name(outer) == "load_state_dict" if outer is not None else False
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return False
    name = parent.targets[0].target.value
    scope = facts.function_scope_of(call)
    for other in facts.data.calls:
        if method_name(other) != "load_state_dict" or not other.args or facts.function_scope_of(other) is not scope:
            continue
        argument = other.args[0].value
        while isinstance(argument, cst.Subscript):
            argument = argument.value
        if isinstance(argument, cst.Name) and argument.value == name:
            return True
    return False

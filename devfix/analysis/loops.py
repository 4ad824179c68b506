"""Per-loop facts for training and evaluation loops: what a loop yields and where it goes.

`FileFacts.loader_loops` finds the `for` loops over data loaders. This module answers, once per
file, the questions DEV004, DEV005, DEV008 and DEV011 share:

- which names a loop yields (`for x, y in loader`, `for i, (x, y) in enumerate(loader)`,
  `for batch in loader:` + `x, y = batch` on the next line, `batch[0]`, `batch["ids"]`,
  `x, y = next(it)` over `it = iter(loader)`), and where a transfer statement goes;
- which of them reach the model, the loss or a metric (and must be on the device), which
  are already moved, and which only meet CPU-side consumers (the `lengths` of
  `pack_padded_sequence`, NumPy / scikit-learn, `print`) and must stay on the CPU;
- manual batches sliced from whole tensors inside a `range` loop (`xb = X[i:i + bs]`);
- tensor factories inside those loops whose results meet device tensors (DEV008).

"Reaches the device" is decided by following each use of a name up its expression: into a
model call, a loss call, or an operation whose other operand is already a device tensor (a
model output, a moved tensor). Assignments propagate (`x = x.view(-1)`). Everything not
proven to reach the device is left where it is: a missing move is a report, a wrong move
breaks a program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from devfix.analysis.scopes import MOVE_METHODS, chain_moves, dotted_name, iter_names

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.facts import FileFacts, Loader

Loop = Union[cst.For, cst.While]

LOSS_NAME = re.compile(r"^(criterion|crit|loss_fn|loss_func|loss_function|lossfn|[a-z_]*criterion[a-z_]*|[a-z_]*_loss_fn|[a-z_]*_loss_func)$")
MODEL_NAME = re.compile(r"^(model|net|network|module|classifier|encoder|decoder|generator|discriminator|net[GD]|policy|policy_net|target_net|actor|critic|[a-z_]*_model|model_[a-z_]*|[a-z_]*_net)$")
LENGTHS_NAME = re.compile(r"^([a-z_]*_)?(lengths|lens|seq_lens|length|seq_len)$")
CPU_METHODS = {"numpy"}  # breaks on a device tensor
HOST_METHODS = {"cpu", "item", "tolist"}  # explicit host conversions: fine either way
SCALAR_METHODS = {"size", "dim", "numel", "nelement", "ndimension", "__len__", "data_ptr", "is_cuda", "get_device"}
CPU_MODULES = ("numpy", "sklearn", "scipy", "pandas", "logging", "matplotlib", "PIL", "cv2")
HOST_BUILTINS = {"print", "len", "str", "repr", "int", "float", "bool", "format", "isinstance", "type", "id", "hash", "list", "tuple", "set", "sorted"}
LOGGING_METHODS = {"info", "debug", "warning", "warn", "error", "log", "add_scalar", "add_scalars", "add_text", "add_histogram", "add_image", "write", "set_description", "set_postfix", "append", "extend", "update_state"}
NOT_MODEL_METHODS = {"parameters", "named_parameters", "train", "eval", "zero_grad", "state_dict", "load_state_dict", "to", "cuda", "cpu", "modules", "children", "named_modules", "buffers", "apply", "requires_grad_"}
FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "eye", "linspace", "logspace", "tensor", "randperm", "as_tensor"}
TENSOR_SOURCES = FACTORIES | {"from_numpy", "stack", "cat", "FloatTensor", "LongTensor", "Tensor"}

DTYPES = {"float", "float32", "float64", "double", "half", "float16", "bfloat16", "long", "int64", "int", "int32", "int16", "int8", "uint8", "bool", "complex64", "complex128"}

REACH, CPU, MOVED, NEUTRAL, BOTH = "reach", "cpu", "moved", "neutral", "both"


@dataclass(eq=False)
class BatchLoop:
    """One loop over a data loader, and what DEV004 needs to know about its batches.

    `kind`: "names" (the loop target or an unpacking gives names), "list" (`batch[0]`),
    "dict" (`batch["ids"]`, `model(**batch)`), "tensor" (`batch` itself is the input).
    The transfer statement goes before `anchor` (top of the loop body) or, with `after`,
    right after it (the `x, y = batch` / `x, y = next(it)` line).
    """

    loop: Loop
    loader_expr: cst.BaseExpression
    loader: Optional["Loader"]
    kind: str
    names: Tuple[str, ...]  # the yielded names, in the user's order (`batch` for list/dict/tensor)
    anchor: Optional[cst.BaseStatement]
    after: bool
    to_move: Tuple[str, ...] = ()  # reach the device and are not moved yet
    moved: Tuple[str, ...] = ()  # already moved by the user
    cpu_side: Tuple[str, ...] = ()  # only meet CPU-side consumers: stay where they are
    reason: Optional[str] = None  # why no transfer can be written (then DEV004 only reports)

    @property
    def needs_transfer(self) -> bool:
        """The batches are not moved, and DEV004 will move them (the fact DEV005 reads)."""
        return bool(self.to_move) and self.reason is None


@dataclass(eq=False)
class SlicedBatch:
    """`xb = X[i:i + bs]` inside `for i in range(...)`: `X` is a CPU tensor of this file."""

    loop: cst.For
    subscript: cst.Subscript
    source: str
    target: str


@dataclass(eq=False)
class LoopFactory:
    """A tensor factory without `device=` whose result meets device tensors: inside a loader
    loop, or in a training step written without one (`loop` is then None)."""

    call: cst.Call
    loop: Optional[Loop]
    target: Optional[str]


def target_names(target: cst.BaseExpression) -> Optional[List[str]]:
    """`x` / `(x, (y, z))` -> names; anything with stars, attributes or subscripts -> None."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: List[str] = []
        for element in target.elements:
            if isinstance(element, cst.StarredElement):
                return None
            inner = target_names(element.value)
            if inner is None:
                return None
            names.extend(inner)
        return names
    return None


def body_statements(loop: Loop) -> Sequence[cst.BaseStatement]:
    body = loop.body
    return body.body if isinstance(body, cst.IndentedBlock) else ()


class LoopAnalysis:
    """Computes the per-loop facts of one file (cached on `FileFacts`)."""

    def __init__(self, facts: "FileFacts") -> None:
        self.facts = facts
        self.model_names = {m.name for m in facts.models if m.kind == "model"}
        self.loss_names = {m.name for m in facts.models if m.kind == "loss"}

    # -- what a call is ------------------------------------------------------------------
    def qualname(self, expr: cst.BaseExpression) -> str:
        return self.facts.qualname(expr, at=expr) or ""

    def is_model_name(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.model_names or bool(MODEL_NAME.match(expr.value))
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return bool(MODEL_NAME.match(expr.attr.value))
        return False

    def is_model_call(self, call: cst.Call) -> bool:
        func = call.func
        if self.is_model_name(func):
            return True
        if isinstance(func, cst.Attribute) and func.attr.value not in NOT_MODEL_METHODS and self.is_model_name(func.value):
            return True  # model.forward(x), model.module(x), model.encode(x)
        return False

    def is_loss_call(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Name) and (func.value in self.loss_names or LOSS_NAME.match(func.value)):
            return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and LOSS_NAME.match(func.attr.value):
            return True
        if isinstance(func, cst.Call) and self.facts.module_kind(func) == "loss":
            return True  # nn.MSELoss()(output, y)
        return self.qualname(func).startswith("torch.nn.functional.")

    def is_cpu_call(self, call: cst.Call) -> bool:
        """NumPy, scikit-learn, ...: a device tensor given to them is an error."""
        return self.qualname(call.func).split(".")[0] in CPU_MODULES

    def is_host_call(self, call: cst.Call) -> bool:
        """`print`, `len`, logging, `list.append`: take any tensor, need none on the device."""
        if isinstance(call.func, cst.Name) and call.func.value in HOST_BUILTINS and not self.facts.bindings_at(call.func.value, call):
            return True
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in LOGGING_METHODS

    def is_pack_lengths(self, call: cst.Call, arg: cst.Arg) -> bool:
        if not self.qualname(call.func).endswith("pack_padded_sequence"):
            return False
        if arg.keyword is not None:
            return arg.keyword.value == "lengths"
        positional = [a for a in call.args if a.keyword is None]
        return len(positional) > 1 and positional[1] is arg

    def is_move_call(self, call: cst.Call) -> bool:
        """`t.to(device)`, `t.to(device, non_blocking=True)`, `t.cuda()` — not `t.to(torch.float32)`."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in MOVE_METHODS:
            return False
        if func.attr.value == "cuda":
            return True
        positional = [a for a in call.args if a.keyword is None]
        if positional:
            qual = self.qualname(positional[0].value)
            return not (qual.startswith("torch.") and qual.split(".", 1)[1] in DTYPES)
        return any(a.keyword is not None and a.keyword.value == "device" for a in call.args)

    # -- device-side expressions ---------------------------------------------------------
    def is_device_expr(self, expr: cst.CSTNode, device_names: Set[str]) -> bool:
        """Does `expr` compute a device tensor (a model call, a moved or device name)?"""
        if isinstance(expr, cst.Name):
            return expr.value in device_names
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in CPU_METHODS | HOST_METHODS | SCALAR_METHODS:
                return False
            if self.is_move_call(expr) or self.is_model_call(expr):
                return True
            if self.is_cpu_call(expr) or self.is_host_call(expr):
                return False
        if isinstance(expr, cst.Attribute):
            return self.is_device_expr(expr.value, device_names)
        if isinstance(expr, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        return any(self.is_device_expr(child, device_names) for child in expr.children)

    # -- following one use up its expression ----------------------------------------------
    def classify(self, node: cst.CSTNode, device_names: Set[str], lengths_like: bool = False) -> Tuple[str, List[str]]:
        """Where the value at `node` goes: REACH / CPU / MOVED / NEUTRAL, and names derived from it."""
        facts = self.facts
        current = node
        for parent in facts.ancestors(node):
            if isinstance(parent, cst.Call):
                if parent.func is current:
                    result = self._as_receiver(parent, device_names)
                    if result is not None:
                        return result, []
                else:
                    arg = current if isinstance(current, cst.Arg) else None
                    if arg is None:
                        return NEUTRAL, []
                    result = self._as_argument(parent, arg, device_names, lengths_like)
                    if result is not None:
                        return result, []
            elif isinstance(parent, (cst.BinaryOperation, cst.Comparison)) or (
                isinstance(parent, (cst.List, cst.Tuple)) and isinstance(facts.parent(parent), cst.Arg)
            ):
                # `pred == y`, `out - y`, `torch.cat([out, y])`: y meets a device tensor.
                others = [c for c in parent.children if c is not current]
                if any(self.is_device_expr(other, device_names) for other in others):
                    return REACH, []
            elif isinstance(parent, cst.Attribute):
                if parent.value is not current:
                    return NEUTRAL, []
                if parent.attr.value in ("shape", "dtype", "device", "ndim", "is_cuda"):
                    return NEUTRAL, []
            elif isinstance(parent, cst.CompFor) and parent.iter is current:
                # `{k: v.to(device) for k, v in batch.items()}`, `[t.to(device) for t in batch]`:
                # iterating the batch into a comprehension of moves moves it (DEV004 writes this).
                return (MOVED if self._comprehension_moves(parent) else NEUTRAL), []
            elif isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is current):
                return NEUTRAL, []
            elif isinstance(parent, cst.Assign):
                names = [n for t in parent.targets for n in (target_names(t.target) or [])]
                return NEUTRAL, names
            elif isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement, cst.IndentedBlock)):
                return NEUTRAL, []
            current = parent
        return NEUTRAL, []

    def _comprehension_moves(self, comp_for: cst.CompFor) -> bool:
        owner = self.facts.parent(comp_for)
        element = owner.value if isinstance(owner, cst.DictComp) else getattr(owner, "elt", None)
        return isinstance(element, cst.Call) and self.is_move_call(element)

    def _as_receiver(self, call: cst.Call, device_names: Set[str]) -> Optional[str]:
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if self.is_move_call(call):
            return MOVED
        if method in CPU_METHODS:
            return CPU
        if method in SCALAR_METHODS or method in HOST_METHODS:
            return NEUTRAL
        if any(self.is_device_expr(arg.value, device_names) for arg in call.args):
            return REACH  # y.eq(pred)
        return None

    def _as_argument(self, call: cst.Call, arg: cst.Arg, device_names: Set[str], lengths_like: bool) -> Optional[str]:
        if self.is_pack_lengths(call, arg):
            return CPU
        if self.is_cpu_call(call):
            return CPU
        if self.is_host_call(call):
            return NEUTRAL
        if self.is_model_call(call):
            if lengths_like or self.model_param_is_lengths(call, arg):
                return CPU
            return REACH
        if self.is_loss_call(call):
            return REACH
        others: List[cst.CSTNode] = [a.value for a in call.args if a is not arg]
        if isinstance(call.func, cst.Attribute):
            others.append(call.func.value)
        if any(self.is_device_expr(other, device_names) for other in others):
            return REACH
        return None

    def model_param_is_lengths(self, call: cst.Call, arg: cst.Arg) -> bool:
        """`model(x, lengths)` where the model's `forward` packs with that parameter."""
        facts = self.facts
        if not isinstance(call.func, cst.Name):
            return False
        model = next((m for m in facts.models if m.name == call.func.value), None)
        klass = facts.model_classes.get(dotted_name(model.call.func) or "") if model is not None else None
        if klass is None or not isinstance(klass.body, cst.IndentedBlock):
            return False
        forward = next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"), None)
        if forward is None:
            return False
        params = [p.name.value for p in forward.params.params][1:]
        if arg.keyword is not None:
            name = arg.keyword.value
        else:
            index = [a for a in call.args if a.keyword is None].index(arg)
            if index >= len(params):
                return False
            name = params[index]
        for inner in facts.data.calls:
            if facts.is_inside(inner, forward) and self.qualname(inner.func).endswith("pack_padded_sequence"):
                for inner_arg in inner.args:
                    if self.is_pack_lengths(inner, inner_arg) and name in {n.value for n in iter_names(inner_arg.value)}:
                        return True
        return False

    # -- where a name goes inside a region --------------------------------------------------
    def uses(self, region: cst.CSTNode, name: str, start: int = -1) -> List[cst.Name]:
        facts = self.facts
        return [n for n in iter_names(region) if n.value == name and facts.order(n) > start]

    def within(self, region: cst.CSTNode):
        """A test "is this node inside `region`" by preorder index: O(1) per node."""
        first = self.facts.order(region)
        last = region
        while last.children:
            last = last.children[-1]
        end = self.facts.order(last)
        return lambda node: first < self.facts.order(node) <= end

    def device_names(self, region: cst.CSTNode, seed: Set[str]) -> Set[str]:
        """Names assigned a device tensor in `region` (model outputs, moved tensors), to a fixpoint."""
        names = set(seed)
        inside = self.within(region)
        assigns = [a for a in self.facts.data.assigns if inside(a)]
        changed = True
        while changed:
            changed = False
            for assign in assigns:
                if chain_moves(assign.value) or self.is_device_expr(assign.value, names):
                    for target in assign.targets:
                        for name in target_names(target.target) or []:
                            if name not in names:
                                names.add(name)
                                changed = True
        return names

    def fate(self, region: cst.CSTNode, name: str, device_names: Set[str], start: int = -1) -> str:
        """REACH / MOVED / CPU / NEUTRAL for the value bound to `name`, over its uses in `region`."""
        seen: Set[str] = set()
        pending = [name]
        results: Set[str] = set()
        lengths_like = bool(LENGTHS_NAME.match(name))
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            for use in self.uses(region, current, start):
                result, derived = self.classify(use, device_names, lengths_like)
                results.add(result)
                pending.extend(d for d in derived if d != current)
        return _combine(results)

    def node_fate(self, region: cst.CSTNode, node: cst.CSTNode, device_names: Set[str]) -> Tuple[str, Optional[str]]:
        """Like `fate`, for an expression node (a factory call): and the name it is bound to."""
        result, derived = self.classify(node, device_names)
        if result != NEUTRAL or not derived:
            return result, None
        target = derived[0] if len(derived) == 1 else None
        results = {self.fate(region, name, device_names, self.facts.order(node)) for name in derived}
        return _combine(results), target

    # -- the loops ---------------------------------------------------------------------------
    def batch_loops(self) -> List[BatchLoop]:
        found: List[BatchLoop] = []
        for loader_loop in self.facts.loader_loops:
            batch = self._for_loop(loader_loop.node, loader_loop.loader_expr, loader_loop.loader)
            if batch is not None:
                found.append(batch)
        found.extend(self._next_loops())
        for batch in found:
            self._decide(batch)
        return found

    def _yields_index(self, iterable: cst.BaseExpression) -> bool:
        """Does a wrapper in `enumerate(tqdm(loader))` prepend an index?"""
        expr = iterable
        while isinstance(expr, cst.Call) and expr.args:
            name = dotted_name(expr.func) or ""
            if name.split(".")[-1] == "enumerate":
                return True
            expr = expr.args[0].value
        return False

    def _for_loop(self, loop: cst.For, loader_expr, loader) -> Optional[BatchLoop]:
        target = loop.target
        if self._yields_index(loop.iter):
            if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
                return None
            target = target.elements[1].value
        statements = body_statements(loop)
        if not statements:
            return None  # `for x, y in loader: step(x, y)`: no place for a statement of its own
        return self._from_target(loop, target, loader_expr, loader, statements[0], False)

    def _from_target(self, loop, target, loader_expr, loader, anchor, after) -> Optional[BatchLoop]:
        if isinstance(target, cst.Name):
            return self._single_name(loop, target.value, loader_expr, loader, anchor, after)
        names = target_names(target)
        if names is None:
            return None
        return BatchLoop(loop, loader_expr, loader, "names", tuple(names), anchor, after)

    def _single_name(self, loop, name, loader_expr, loader, anchor, after) -> Optional[BatchLoop]:
        facts = self.facts
        start = facts.order(anchor) - 1 if after else -1
        for statement in body_statements(loop):
            if after and facts.order(statement) <= facts.order(anchor):
                continue
            unpack = _unpacking_of(statement, name)
            if unpack is not None:
                return BatchLoop(loop, loader_expr, loader, "names", tuple(unpack), statement, True)
        uses = self.uses(loop.body, name, start)
        parents = [facts.parent(use) for use in uses]
        subscripts = [p for p, use in zip(parents, uses) if isinstance(p, cst.Subscript) and p.value is use]
        starstar = [p for p in parents if isinstance(p, cst.Arg) and p.star == "**"]
        plain = len(uses) - len(subscripts) - len(starstar)
        if uses and len(subscripts) == len(uses):
            keys = [_index_key(s) for s in subscripts]
            if all(isinstance(k, int) for k in keys):
                return BatchLoop(loop, loader_expr, loader, "list", (name,), anchor, after)
            if all(isinstance(k, str) for k in keys):
                return BatchLoop(loop, loader_expr, loader, "dict", (name,), anchor, after)
            return None  # indexed in ways devfix cannot follow
        if starstar and not subscripts:
            return BatchLoop(loop, loader_expr, loader, "dict", (name,), anchor, after)
        if plain and not subscripts and not starstar:
            return BatchLoop(loop, loader_expr, loader, "tensor", (name,), anchor, after)
        return None  # used both whole and indexed: unknown structure

    def _next_loops(self) -> Iterator[BatchLoop]:
        """`x, y = next(it)` (it = iter(loader)) or `next(iter(loader))` inside a loop body."""
        facts = self.facts
        for assign in facts.data.assigns:
            value = assign.value
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next" and value.args):
                continue
            if facts.bindings_at("next", assign):
                continue
            loader_expr = self._iterated_loader(value.args[0].value, assign)
            if loader_expr is None:
                continue
            loop = facts.enclosing(assign, (cst.For, cst.While))
            statement = facts.statement_of(assign)
            if loop is None or statement is None or len(assign.targets) != 1:
                continue
            if facts.enclosing(assign, (cst.FunctionDef,)) is not facts.enclosing(loop, (cst.FunctionDef,)):
                continue
            _, loader = facts.loader_for(loader_expr)
            batch = self._from_target(loop, assign.targets[0].target, loader_expr, loader, statement, True)
            if batch is not None:
                yield batch

    def _iterated_loader(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[cst.BaseExpression]:
        facts = self.facts
        if isinstance(expr, cst.Name):
            # `it = iter(loader)`, possibly re-bound the same way when the loader runs out.
            bindings = facts.bindings_at(expr.value, at)
            if not bindings or any(b.value is None for b in bindings):
                return None
            found = [self._iterated_loader(b.value, b.node) for b in bindings]  # type: ignore[arg-type]
            codes = {cst.Module([]).code_for_node(f) if f is not None else None for f in found}
            return found[0] if len(codes) == 1 and None not in codes else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "iter" and expr.args:
            inner = facts.unwrap_iterable(expr.args[0].value)
            if facts.loader_for(inner)[0]:
                return inner
        return None

    def _decide(self, batch: BatchLoop) -> None:
        """Sort the yielded names into to_move / moved / cpu_side."""
        if batch.reason is not None:
            return
        region = batch.loop.body
        start = self.facts.order(batch.anchor) if batch.after and batch.anchor is not None else -1
        base = self.device_names(region, set())
        fates = {name: self.fate(region, name, base, start) for name in batch.names}
        # Names that reach the model are device tensors once moved: a second pass lets a label
        # that only meets a moved input (`x - y`) reach the device too.
        reaching = {n for n, f in fates.items() if f in (REACH, MOVED)}
        if reaching:
            device = self.device_names(region, reaching)
            fates = {name: (fate if fate != NEUTRAL else self.fate(region, name, device, start)) for name, fate in fates.items()}
        if batch.kind in ("list", "dict") and fates.get(batch.names[0]) == REACH:
            keys = self._key_fates(batch, base | reaching, start)
            if CPU in keys.values():
                batch.reason = f"some entries of '{batch.names[0]}' only go to CPU-side code; move the others by hand"
                return
            if MOVED in keys.values():
                fates[batch.names[0]] = MOVED
        both = [n for n in batch.names if fates[n] == BOTH]
        if both:
            batch.reason = f"'{both[0]}' reaches the model and also CPU-only code (NumPy, pack_padded_sequence lengths); move it by hand and keep a CPU copy"
            return
        batch.to_move = tuple(n for n in batch.names if fates[n] == REACH)
        batch.moved = tuple(n for n in batch.names if fates[n] == MOVED)
        batch.cpu_side = tuple(n for n in batch.names if fates[n] == CPU)

    def _key_fates(self, batch: BatchLoop, device: Set[str], start: int) -> Dict[object, str]:
        found: Dict[object, Set[str]] = {}
        for use in self.uses(batch.loop.body, batch.names[0], start):
            parent = self.facts.parent(use)
            node = parent if isinstance(parent, cst.Subscript) else use
            key = _index_key(parent) if isinstance(parent, cst.Subscript) else "*"
            result, derived = self.classify(node, device)
            if result == NEUTRAL and derived:
                result = _combine({self.fate(batch.loop.body, d, device, self.facts.order(use)) for d in derived})
            found.setdefault(key, set()).add(result)
        return {key: _combine(results) for key, results in found.items()}

    # -- manual batches ------------------------------------------------------------------------
    def sliced_batches(self) -> List[SlicedBatch]:
        facts = self.facts
        found: List[SlicedBatch] = []
        for loop in facts.data.for_loops:
            if not (isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range"):
                continue
            if facts.bindings_at("range", loop) or not isinstance(loop.target, cst.Name):
                continue
            index = loop.target.value
            for statement in body_statements(loop):
                sliced = self._sliced(loop, statement, index)
                if sliced is not None:
                    found.append(sliced)
        return found

    def _sliced(self, loop: cst.For, statement: cst.BaseStatement, index: str) -> Optional[SlicedBatch]:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign)):
            return None
        assign = statement.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return None
        value = assign.value
        if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)):
            return None
        if not any(isinstance(e.slice, cst.Slice) for e in value.slice):
            return None
        if index not in {n.value for n in iter_names(value.slice[0])}:
            return None
        if not self.is_cpu_tensor(value.value.value, assign):
            return None
        target = assign.targets[0].target.value
        device = self.device_names(loop.body, set())
        if self.fate(loop.body, target, device, self.facts.order(assign)) != REACH:
            return None
        return SlicedBatch(loop, value, value.value.value, target)

    def is_cpu_tensor(self, name: str, at: cst.CSTNode) -> bool:
        """`name` is bound once, in this file, to a torch tensor built without a device."""
        facts = self.facts
        bindings = facts.bindings_at(name, at)
        if not bindings or len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
            return False
        return self.is_cpu_tensor_expr(bindings[0].value)

    def is_cpu_tensor_expr(self, value: cst.BaseExpression) -> bool:
        if chain_moves(value) or not isinstance(value, cst.Call):
            return False
        inner = value
        while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value in ("float", "long", "double", "half", "int", "contiguous", "view", "reshape", "unsqueeze", "squeeze", "clone"):
            inner = inner.func.value
        if not isinstance(inner, cst.Call):
            return False
        qual = self.qualname(inner.func)
        if not qual.startswith("torch.") or qual.split(".")[-1] not in TENSOR_SOURCES:
            return False
        return all(not (arg.keyword is not None and arg.keyword.value == "device") for arg in inner.args)

    # -- factories inside loader loops (DEV008) ---------------------------------------------
    def loop_factories(self, batch_loops: Sequence[BatchLoop]) -> List[LoopFactory]:
        facts = self.facts
        found: List[LoopFactory] = []
        seen: Set[int] = set()
        for batch in batch_loops:
            region = batch.loop.body
            seed = set(batch.to_move) | set(batch.moved)
            device = self.device_names(region, seed)
            inside = self.within(region)
            for call in facts.data.calls:
                if id(call) in seen or not inside(call):
                    continue
                qual = self.qualname(call.func)
                if not qual.startswith("torch.") or qual.count(".") != 1 or qual.split(".")[1] not in FACTORIES:
                    continue
                if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
                    continue
                if any(arg.star for arg in call.args):
                    continue
                fate, target = self.node_fate(region, call, device)
                if fate == REACH:
                    seen.add(id(call))
                    found.append(LoopFactory(call, batch.loop, target))
        found.extend(self._step_factories(seen))
        return found

    def _step_factories(self, seen: Set[int]) -> List[LoopFactory]:
        """Factories in straight-line code (no loop around them) of a script or function whose
        result reaches the model or the loss: `inputs = torch.randn(...)`; `model(inputs)`.
        Methods of module classes are DEV007's; loops are handled above or by DEV004."""
        facts = self.facts
        found: List[LoopFactory] = []
        for scope in facts.data.scopes.values():
            if scope.kind not in ("module", "function") or scope.enclosing_class is not None:
                continue
            if not self._moves_a_model(scope):
                continue  # a CPU-only step (efficientnet's `test()`): its inputs are right
            region = scope.node
            for call in facts.data.calls:
                if id(call) in seen or facts.function_scope_of(call) is not scope or not self._is_plain_factory(call):
                    continue
                if facts.enclosing(call, (cst.For, cst.While, cst.BaseComp, cst.Lambda)) is not None:
                    continue
                assign = facts.parent(call)
                if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
                    continue
                target = assign.targets[0].target.value
                if self._only_feeds_model(region, target, facts.order(call)):
                    seen.add(id(call))
                    found.append(LoopFactory(call, None, target))
        return found

    def _only_feeds_model(self, region: cst.CSTNode, name: str, start: int) -> bool:
        """Every later use of `name` passes it straight to the model or the loss (or reads its
        shape), and one does. Anything else — a dataset, a helper — and devfix is unsure."""
        facts = self.facts
        feeds = False
        for use in self.uses(region, name, start):
            parent = facts.parent(use)
            call = facts.parent(parent) if isinstance(parent, cst.Arg) and parent.keyword is None else None
            if isinstance(call, cst.Call) and (self.is_model_call(call) or self.is_loss_call(call)):
                feeds = True
                continue
            if isinstance(parent, cst.Attribute) and parent.value is use and parent.attr.value in ("shape", "size", "dtype", "ndim"):
                continue
            return False
        return feeds

    def _moves_a_model(self, scope) -> bool:
        """A model built in `scope` is moved there (at construction or by `model.to(...)`)."""
        facts = self.facts
        for model in facts.models:
            if model.scope is not scope or model.kind != "model":
                continue
            if chain_moves(model.binding.value):
                return True
            for call in facts.references(model.name, scope):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in MOVE_METHODS and isinstance(func.value, cst.Name):
                    return True
        return False

    def _is_plain_factory(self, call: cst.Call) -> bool:
        qual = self.qualname(call.func)
        if not qual.startswith("torch.") or qual.count(".") != 1 or qual.split(".")[1] not in FACTORIES:
            return False
        return not any(arg.star or (arg.keyword is not None and arg.keyword.value == "device") for arg in call.args)

    # -- tensors (DEV011) ----------------------------------------------------------------------
    def is_tensor_name(self, name: str, at: cst.CSTNode, batch_loops: Sequence[BatchLoop]) -> bool:
        """A name bound to a tensor: a torch factory, or yielded by a loader loop."""
        facts = self.facts
        if name in self.model_names or name in self.loss_names or MODEL_NAME.match(name):
            return False
        for batch in batch_loops:
            if name in batch.names and batch.kind in ("names", "tensor") and facts.is_inside(at, batch.loop):
                return True
        bindings = facts.bindings_at(name, at)
        if not bindings:
            return False
        values = [b.value for b in bindings if b.kind == "assign" and b.value is not None]
        if len(values) != len(bindings):
            return False
        return all(self._tensor_expr(v) for v in values)

    def _tensor_expr(self, value: cst.BaseExpression) -> bool:
        inner = value
        while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value in ("to", "cuda", "float", "long", "double", "half", "int", "contiguous", "view", "reshape", "unsqueeze", "squeeze", "clone", "detach"):
            inner = inner.func.value
        if not isinstance(inner, cst.Call):
            return False
        qual = self.qualname(inner.func)
        return qual.startswith("torch.") and qual.split(".")[-1] in TENSOR_SOURCES


def _combine(results: Set[str]) -> str:
    """One verdict for all uses: moved by the user wins; device and CPU uses at once: BOTH."""
    if MOVED in results:
        return MOVED
    if CPU in results and REACH in results:
        return BOTH
    if CPU in results:
        return CPU
    if REACH in results:
        return REACH
    return NEUTRAL


def _index_key(subscript: cst.Subscript) -> object:
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    value = subscript.slice[0].slice.value
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    if isinstance(value, cst.SimpleString):
        try:
            text = value.evaluated_value
        except Exception:  # noqa: BLE001
            return None
        return text if isinstance(text, str) else None
    return None


def _unpacking_of(statement: cst.BaseStatement, name: str) -> Optional[List[str]]:
    """`x, y = batch` -> ["x", "y"]."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign)):
        return None
    assign = statement.body[0]
    if len(assign.targets) != 1 or not (isinstance(assign.value, cst.Name) and assign.value.value == name):
        return None
    target = assign.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    return target_names(target)

"""The device-flow evaluator: statements and expressions of one scope, in order.

A `Frame` evaluates one scope (the module body, a function, a method) the way it runs on a
machine with one GPU: names map to abstract `Value`s, branches whose test is a GPU check
take their GPU side, other branches are joined, loop bodies run twice so that values
carried round the loop settle. Modules live on a small heap (`Frame.heap`) because
`model.to(device)` moves a module in place, whatever name reaches it.

Everything the rules need is recorded on the `Program` as it goes: the value of each
expression, each binding, each meeting (see `values.Meeting`), each loader and loop.
Call semantics (what `torch.zeros`, `model(x)`, `x.to(d)`, `DataLoader(...)` do) are in
`calls.py`; the fixpoint over functions and classes in `program.py`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

import libcst as cst

from devfix.analysis import calls, conditions, operations, options
from devfix.analysis import torch_api as api
from devfix.analysis.scopes import Scope
from devfix.analysis.torch_api import CUDA_FLAG_NAME
from devfix.analysis.values import (
    GPU_COUNT,
    HOST,
    UNKNOWN,
    Kind,
    Obj,
    Origin,
    Place,
    Slot,
    Value,
    condition,
    constant,
    join,
    join_slots,
    members,
)

if TYPE_CHECKING:  # pragma: no cover
    from devfix.analysis.classinfo import ClassInfo
    from devfix.analysis.functions import FunctionInfo
    from devfix.analysis.program import Program

BUILTIN_NAMES = frozenset(dir(builtins))


class Frame:
    """One evaluation of one scope."""

    def __init__(
        self,
        program: Program,
        node: cst.CSTNode,
        scope: Scope,
        *,
        function: FunctionInfo | None = None,
        world: str = "program",
        env: dict[str, Value] | None = None,
        heap: dict[int, Slot] | None = None,
    ) -> None:
        self.program = program
        self.node = node
        self.scope = scope
        self.function = function
        self.world = world  # "program" | "module" (the methods of an nn.Module subclass)
        self.env: dict[str, Value] = dict(env or {})
        self.heap: dict[int, Slot] = dict(heap or {})
        self.no_grad = 0
        self.device_context = 0  # inside `with device:` (a torch.device as a context): factories make things there
        self.attribute_owners: set[str] = set()  # module-level names whose attributes the code sets
        self.choice_guard = 0  # inside a GPU check that is the user's choice (`if args.cuda:`)
        self.gpu_guards: list[str] = []  # the reasons ("choice", "available") of the GPU checks around
        self.loops: list[cst.CSTNode] = []
        self.returns: Value | None = None
        self.tuples_returned: dict[int, Value] = {}  # `return h, loss, np.array(t)`: by length
        self.ended = False  # this path returned, raised, broke or continued: it does not fall through
        self.klass: ClassInfo | None = function.klass if function is not None else None
        self.self_name: str | None = function.self_name if function is not None else None

    # -- state ---------------------------------------------------------------------------------
    def snapshot(self) -> tuple[dict[str, Value], dict[int, Slot]]:
        return dict(self.env), dict(self.heap)

    def restore(self, state: tuple[dict[str, Value], dict[int, Slot]]) -> None:
        self.env, self.heap = dict(state[0]), dict(state[1])

    def merge(self, states: list[tuple[dict[str, Value], dict[int, Slot]]], loop: bool = False) -> None:
        """The state after paths that each ended in one of `states`. After a loop (`loop`, the
        states before it and after its body), a name the body binds first is the body's value:
        read after a loop that never ran, it raises, so where a read succeeds the body bound it
        (`iter_count` made in a restarts loop, then returned)."""
        if not states:
            return
        env, heap = dict(states[0][0]), dict(states[0][1])
        for other_env, other_heap in states[1:]:
            for name in set(env) | set(other_env):
                if name in env and name in other_env:
                    env[name] = join(env[name], other_env[name])
                elif loop and name in other_env:
                    env[name] = other_env[name]
                elif name.split(".", 1)[0] in self.attribute_owners and "." in name:
                    env.pop(name, None)  # `args.apex_amp = True` on one path only: the option elsewhere
                else:
                    env[name] = _partial(env.get(name) or other_env.get(name))
            for obj in set(heap) | set(other_heap):
                heap[obj] = (
                    join_slots(heap.get(obj), other_heap.get(obj))
                    if obj in heap and obj in other_heap
                    else (Place.UNKNOWN, frozenset())
                )
        self.env, self.heap = env, heap

    def set_place(self, obj: Obj | None, place: Place, origins: Iterable[Origin] = frozenset()) -> None:
        """Move a module (and the modules it holds) in place; `origins`: the move's evidence."""
        if obj is None:
            return
        seen: set[int] = set()
        stack = list(members(obj))
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            slot = (place, frozenset(origins) if place is not Place.UNKNOWN else frozenset())
            self.heap[current] = slot
            self.program.heap_writes.setdefault(current, []).append(slot)
            stack.extend(self.program.children.get(current, ()))

    def _replaced_weights(self, target: cst.Attribute, value: Value) -> None:
        """`cell.weight_hh.data = gru.weight_hh_l0.data`: the module's weights are now tensors
        from elsewhere (a `GRUCell` sharing a `GRU`'s weights), wherever those live; the flow
        no longer knows where the module is."""
        if target.attr.value != "data" or not isinstance(target.value, cst.Attribute):
            return
        if value.kind is Kind.TENSOR and value.place is Place.CPU:
            return
        owner = self.expr(target.value.value)
        if owner.kind is Kind.MODULE and owner.obj is not None:
            self.set_place(owner.obj, Place.UNKNOWN)

    def place_of(self, value: Value) -> Value:
        """A module value with its current place from the heap."""
        if value.kind is Kind.MODULE and value.obj is not None:
            slot = self.slot_of(value.obj, (value.place, value.origins))
            if slot is not None and (slot[0] is not value.place or slot[1] != value.origins):
                return replace(value, place=slot[0], origins=slot[1])
        return value

    def slot_of(self, obj: Obj, default: Slot | None = None) -> Slot | None:
        """Where the module(s) of a heap identity live: None when the heap has none of them."""
        slots = [self.heap.get(member) for member in members(obj)]
        if all(slot is None for slot in slots):
            return None
        joined: Slot | None = None
        for slot in slots:
            slot = slot if slot is not None else default
            joined = join_slots(joined, slot) if joined is not None else slot
        return joined

    def escape(self, value: Value) -> None:
        """`value` was handed to code the analysis cannot see: a module may be moved there."""
        if value.kind is Kind.MODULE and value.obj is not None and not value.neutral:
            self.set_place(value.obj, Place.UNKNOWN)
        if value.kind is Kind.LOADER and isinstance(value.obj, int):  # a loader's obj: its call's id
            self.program.loaders_escaped.add(value.obj)  # consumed where devfix cannot see
        for item in value.items or ():
            self.escape(item)

    # -- names -----------------------------------------------------------------------------------
    def lookup(self, name: str) -> Value:
        if name in self.env:
            return self.place_of(self.env[name])
        if self.scope.kind != "module" and name in self.scope.bindings:
            return UNKNOWN  # a local not bound yet on this path
        seen = self.function.call_globals if self.function is not None else None
        return self.place_of(self.program.global_value(name, self.scope, seen))

    def bind(self, target: cst.BaseExpression, value: Value, binder: cst.CSTNode) -> None:
        """Assign `value` to an assignment/loop target, destructuring tuples and lists."""
        if self.gpu_guards and value.kind is Kind.HOST and value.truth is True and value.flag == "constant":
            # `if args.cuda: use_gpu = True` (or `self.cuda = True`): a flag that says what the
            # check said, false where the check is (a CPU-only machine)
            value = replace(value, flag=self.gpu_guards[-1], cpu=False)
        if self.gpu_guards and value.qual == "torch.cuda" and value.flag is None:
            # `if torch.cuda.is_available(): type_prefix = torch.cuda else: type_prefix = torch`
            # (TabSurvey's DeepGBM): its tensor types are CUDA's only where the check chose them
            value = replace(value, flag=self.gpu_guards[-1])
        if isinstance(target, cst.Name):
            value = self.program.rebind_origins(value, target.value, binder, self.loops[-1] if self.loops else None)
            if target.value in self.attribute_owners:
                prefix = f"{target.value}."
                for key in [key for key in self.env if key.startswith(prefix)]:
                    del self.env[key]  # a new object: the attributes set on the old one are gone
            self.env[target.value] = value
            self.program.bound[(id(binder), target.value)] = value
            self.program.values[id(target)] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = list(target.elements)
            starred = any(isinstance(e, cst.StarredElement) for e in elements)
            for index, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    self.bind(element.value, _rest_of(value), binder)
                else:
                    self.bind(element.value, _item(value, index, len(elements) if not starred else None), binder)
        elif isinstance(target, cst.Attribute):
            self._replaced_weights(target, value)
            self.program.classes_assign(self, target, value)
        elif (
            isinstance(target, cst.Subscript)
            and isinstance(target.value, cst.Name)
            and operations.iterates_its_own_keys(self.program, target)
        ):
            self.env[target.value.value] = operations.struct(element=value)  # a dict, moved key by key
        elif isinstance(target, cst.Subscript):
            container = self.expr(target.value)
            indices = [
                self.expr(element.slice.value) for element in target.slice if isinstance(element.slice, cst.Index)
            ]
            if (
                container.kind is Kind.TENSOR
                and container.place is Place.CPU
                and value.kind is Kind.TENSOR
                and value.place is Place.DEVICE
                and (self.world == "module" or any(index.kind is Kind.TENSOR for index in indices))
            ):
                # `outputs[t] = self.out(h)` into `outputs = torch.zeros(...)` in a module's
                # forward: its results leave the device. `buf[mask] = out`: an indexed put needs
                # its values on the tensor's device. Elsewhere a plain index copies across devices
                # (a script collecting `attentions[i] = attention` to plot them), and a CPU value
                # written into a device tensor is fine (`pe[:, 0::2] = ...`)
                plain = not any(index.kind is Kind.TENSOR for index in indices)
                self.program.meet(
                    target, "store", [(target.value, container), (target, value)], detail="plain" if plain else ""
                )
            if isinstance(target.value, cst.Name) and container.kind is Kind.STRUCT:
                updated = replace(
                    container,
                    element=join(container.element, value) if container.element is not None else value,
                    items=None,
                    keys=None,
                )
                self.env[target.value.value] = updated
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, _rest_of(value), binder)

    # -- statements -------------------------------------------------------------------------------
    def block(self, body: cst.BaseSuite) -> None:
        if isinstance(body, cst.IndentedBlock):
            self.statements(body.body)
        elif isinstance(body, cst.SimpleStatementSuite):
            for small in body.body:
                if self.ended:
                    break
                self.small(small, body)

    def statements(self, statements: Iterable[cst.BaseStatement]) -> None:
        for statement in statements:
            if self.ended:
                break  # unreachable on this path
            self.statement(statement)

    def _branches(
        self, before: tuple[dict[str, Value], dict[int, Slot]], branches: Sequence[Callable[[], None]]
    ) -> None:
        """Run each branch from the state `before`; continue with the paths that fall through."""
        ends = []
        for branch in branches:
            self.restore(before)
            self.ended = False
            branch()
            ends.append((self.snapshot(), self.ended))
        open_ends = [state for state, ended in ends if not ended]
        self.merge(open_ends or [ends[-1][0]])
        self.ended = not open_ends

    def statement(self, statement: cst.BaseStatement) -> None:
        handler = _STATEMENTS.get(type(statement))
        if handler is not None:
            handler(self, statement)

    def _simple(self, line: cst.SimpleStatementLine) -> None:
        for small in line.body:
            if self.ended:
                break
            self.small(small, line)

    def small(self, small: cst.BaseSmallStatement, line: cst.CSTNode) -> None:
        if isinstance(small, cst.Assign):
            value = self.expr(small.value)
            for target in small.targets:
                self.bind(target.target, value, small)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                value = self.expr(small.value)
                if _annotated_a_number(small.annotation) and value.kind is Kind.OTHER and value.flag is None:
                    value = HOST  # `self.beta: float = beta`: `torch.tensor(self.beta)` is 0-dim (neuralop)
                self.bind(small.target, value, small)
        elif isinstance(small, cst.AugAssign):
            self._aug_assign(small)
        elif isinstance(small, cst.Expr):
            value = self.expr(small.value)
            if not (self.node is self.program.module and id(line) in self.program.displayed_lines):
                self._discarded_move(small, value)
        elif isinstance(small, cst.Return):
            value = self.expr(small.value) if small.value is not None else HOST
            self.returns = join(self.returns, value) if self.returns is not None else value
            if value.kind is Kind.STRUCT and value.items is not None:
                known = self.tuples_returned.get(len(value.items))
                self.tuples_returned[len(value.items)] = join(known, value) if known is not None else value
            self.ended = True
        elif isinstance(small, (cst.Break, cst.Continue)):
            self.ended = True
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self.program.bind_import(self, small)
        elif isinstance(small, cst.Assert):
            self.expr(small.test)
        elif isinstance(small, cst.Raise):
            if small.exc is not None:
                self.expr(small.exc)
            self.ended = True
        elif isinstance(small, cst.Del):
            pass

    def _discarded_move(self, statement: cst.Expr, moved: Value) -> None:
        """`x.to(device)` alone on its line moves nothing (`Tensor.to` returns a copy). When the
        program asks (DEV011 fixes it), take it as the assignment the author meant, so that no
        other fix moves `x` a second time."""
        call = statement.value
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in ("to", "cuda")
        ):
            return
        receiver = call.func.value
        before = self.program.values.get(id(receiver))
        if not isinstance(receiver, cst.Name) or before is None or before.kind is not Kind.TENSOR or before.member:
            return
        if before.place is Place.UNKNOWN and not before.origins:
            return  # only said to be a tensor (an item of a loaded checkpoint may be a whole module)
        if moved.place is before.place and moved.place is not Place.UNKNOWN:
            return  # a dtype cast, or already there
        if receiver.value not in self.scope.bindings:
            return  # assigning would make a global or enclosing variable local here
        self.program.discarded_moves.append(statement)
        if self.program.assume_discarded_assigned and id(statement) not in self.program.kept_discards:
            self.env[receiver.value] = moved

    def _aug_assign(self, node: cst.AugAssign) -> None:
        right = self.expr(node.value)
        left = self.expr(node.target)
        result = operations.arithmetic(self, node, left, right, node.target, node.value)
        if isinstance(node.target, cst.Name):
            self.env[node.target.value] = result
            self.program.bound[(id(node), node.target.value)] = result
        elif isinstance(node.target, cst.Attribute):
            self.program.classes_assign(self, node.target, result)

    def _if(self, node: cst.If) -> None:
        truth, flag = self.condition(node.test)
        if truth is True:
            self._guarded_block(node.body, flag)
            conditions.else_taken_without_gpu(self, node, flag)
            return
        if truth is False:
            tested = self.program.values.get(id(node.test))
            if node.orelse is not None:
                self._orelse(node.orelse)  # first: `if args.gpu < 0: cuda = False else: cuda = True`
            if flag in ("available", "choice") or (tested is not None and tested.cpu is True):
                # skipped on a GPU machine, taken on a CPU-only one: `if not torch.cuda.is_available()
                # and cfg.cuda: device = 'cpu'` (torchxrayvision) decides per machine
                conditions.overridden_without_gpu(
                    self, node.body, flag if flag in ("available", "choice") else "available"
                )
            return
        orelse = node.orelse
        retyped = conditions.retyped_in_branch(self, node.test)
        self._branches(
            self.snapshot(),
            [
                lambda: self._retyped_block(node.body, retyped),
                lambda: self._orelse(orelse) if orelse is not None else None,
            ],
        )

    def _retyped_block(self, body: cst.BaseSuite, retyped: dict[str, Value]) -> None:
        self.env.update(retyped)
        self.block(body)

    def _guarded_block(self, body: cst.BaseSuite, flag: str | None) -> None:
        choice = flag == "choice"
        self.choice_guard += choice
        guarded = flag in ("choice", "available")
        if guarded and flag is not None:
            self.gpu_guards.append(flag)
        try:
            self.block(body)
        finally:
            self.choice_guard -= choice
            if guarded:
                self.gpu_guards.pop()

    def _orelse(self, orelse: cst.If | cst.Else) -> None:
        if isinstance(orelse, cst.If):
            self._if(orelse)
        else:
            self.block(orelse.body)

    def _for(self, node: cst.For) -> None:
        iterable = self.expr(node.iter)
        element = operations.iterate(self, iterable, node)
        self.program.loop_iterables[id(node)] = iterable
        before = self.snapshot()
        self.loops.append(node)
        try:
            for _ in range(2):
                self.bind(node.target, element, node)
                self.block(node.body)
                self.ended = False  # `break` / `continue` end an iteration, not the loop
                self.merge([before, self.snapshot()], loop=True)
        finally:
            self.loops.pop()
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _while(self, node: cst.While) -> None:
        before = self.snapshot()
        self.loops.append(node)
        try:
            for _ in range(2):
                self.expr(node.test)
                self.block(node.body)
                self.ended = False
                self.merge([before, self.snapshot()], loop=True)
        finally:
            self.loops.pop()
        if node.orelse is not None:
            self.block(node.orelse.body)

    def _try(self, node: cst.Try | cst.TryStar) -> None:
        def body() -> None:
            self.block(node.body)
            if node.orelse is not None and not self.ended:
                self.block(node.orelse.body)

        def handler_of(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> Callable[[], None]:
            def run() -> None:
                if handler.name is not None:
                    self.bind(handler.name.name, UNKNOWN, handler)
                self.block(handler.body)

            return run

        self._branches(self.snapshot(), [body, *[handler_of(h) for h in node.handlers]])
        if node.finalbody is not None:
            ended, self.ended = self.ended, False
            self.block(node.finalbody.body)
            self.ended = self.ended or ended

    def _with(self, node: cst.With) -> None:
        no_grad = placing = 0
        for item in node.items:
            value = self.expr(item.item)
            if operations.is_no_grad_context(self, item.item, value):
                no_grad += 1
            if value.kind is Kind.DEVICE and value.place is not Place.CPU:
                placing += 1  # `with torch.device("cuda"):` builds models and tensors there
            if item.asname is not None:
                self.bind(item.asname.name, operations.entered(value), node)
        self.no_grad += no_grad
        self.device_context += placing
        try:
            self.block(node.body)
        finally:
            self.no_grad -= no_grad
            self.device_context -= placing

    def _function_def(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            self.expr(decorator.decorator)
        self.env[node.name.value] = Value(Kind.OTHER, Place.UNKNOWN, ref=node)

    def _class_def(self, node: cst.ClassDef) -> None:
        self.program.define_class(self, node)
        self.env[node.name.value] = Value(Kind.OTHER, Place.UNKNOWN, ref=node)

    def _match(self, node: cst.Match) -> None:
        self.expr(node.subject)
        cases = [lambda case=case: self.block(case.body) for case in node.cases]
        self._branches(self.snapshot(), [*cases, lambda: None])

    # -- conditions ---------------------------------------------------------------------------------
    def condition(self, test: cst.BaseExpression) -> tuple[bool | None, str | None]:
        """Whether `test` holds when the program runs on a GPU machine as intended, and why:
        "available" (a CUDA availability check), "choice" (a user's flag such as `args.cuda`),
        "constant". None when the analysis cannot tell."""
        value = self.test(test)
        return conditions.truth(value), value.flag

    def test(self, node: cst.BaseExpression) -> Value:
        """A condition's value. A flag whose value the flow cannot follow but whose name says
        "use the GPU" (`self.use_cuda`, `opt.gpu`) is the user's choice: on where a GPU is. So is
        one set to False and, somewhere else, to True (`self.cuda = False` in `__init__`, `True` in
        the method that honours `--cuda`): the flow knows both constants but not which holds."""
        boolean = conditions.compared_with_a_bool(node)
        if boolean is not None:
            # `args.onGPU == True`, `use_cuda is False`: the flag's own test
            self.expr(node)
            tested = self.test(boolean[0])
            value = tested if boolean[1] else conditions.negate(tested)
            self.program.values[id(node)] = value
            return value
        value = self.expr(node)
        if value.flag == "constant" and value.truth is True and conditions.switch_passed_on(self, node):
            # `Cuda = True` that the script also hands to its helpers (`fit_one_epoch(..., Cuda)`),
            # which test it themselves: the user's switch for the whole program, not a constant
            value = condition(True, False, "choice")
            self.program.values[id(node)] = value
            return value
        if (value.truth is None and value.kind is not Kind.HOST) or (
            value.kind is Kind.HOST and value.truth is None and value.flag in (None, "constant")
        ):
            name = (
                node.attr.value
                if isinstance(node, cst.Attribute)
                else (node.value if isinstance(node, cst.Name) else conditions.option_key(node))
            )
            # a module method's parameter is taken for an activation of unknown place until
            # shown otherwise; one named `use_cuda` that a condition tests is a flag
            unknown_param = value.kind is Kind.TENSOR and value.place is Place.UNKNOWN and value.param is not None
            if (
                name is not None
                and CUDA_FLAG_NAME.match(name)
                and (value.kind in (Kind.OTHER, Kind.HOST, Kind.STRUCT) or unknown_param)
            ):
                # `opt.no_cuda`: not given where there is a GPU, given where there is none
                negative = api.is_negative_flag(name)
                value = condition(not negative, negative, "choice")
                self.program.values[id(node)] = value
            elif (
                isinstance(node, cst.Comparison) and value.kind is Kind.HOST and conditions.option_compared(self, node)
            ):
                chosen = operations.option_test(node, passed_count=self.is_parameter(node.left))
                if chosen is not None:
                    value = chosen
                    self.program.values[id(node)] = value
            elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                inner = self.program.values.get(id(node.expression))
                if inner is not None and inner.truth is None:
                    flagged = self.test(node.expression)
                    if flagged.truth is not None:
                        value = conditions.negate(flagged)
                        self.program.values[id(node)] = value
        return value

    # -- expressions ---------------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> Value:
        handler = _EXPRESSIONS.get(type(node))
        value = handler(self, node) if handler is not None else UNKNOWN
        self.program.values[id(node)] = value
        return value

    def _name(self, node: cst.Name) -> Value:
        if node.value in ("True", "False"):
            return constant(node.value == "True")
        if node.value == "None":
            return constant(False)
        value = self.lookup(node.value)
        if node.value in self.attribute_owners and value.kind is Kind.OTHER:
            value = options.with_written_attributes(self.env, node.value, value)
        if isinstance(value.ref, cst.FunctionDef):
            parent = self.program.data.parent.get(id(node))
            if not (isinstance(parent, cst.Call) and parent.func is node):
                self.program.escaped_functions.add(id(value.ref))  # `map(f, xs)`, `hook=f`: called unseen
        return value

    def _attribute(self, node: cst.Attribute) -> Value:
        base = self.expr(node.value)
        if isinstance(node.value, cst.Name):
            written = self.env.get(f"{node.value.value}.{node.attr.value}")
            if written is not None:
                return written  # set by the module's own code (`args.mixmode = ...`)
        return operations.attribute(self, node, base)

    def _call(self, node: cst.Call) -> Value:
        return calls.call(self, node)

    def _subscript(self, node: cst.Subscript) -> Value:
        return operations.subscript(self, node, self.expr(node.value))

    def _binary(self, node: cst.BinaryOperation) -> Value:
        left = self.expr(node.left)
        right = self.expr(node.right)
        if (
            isinstance(node.operator, (cst.Divide, cst.FloorDivide, cst.Modulo))
            and right.text == GPU_COUNT
            and isinstance(node.right, (cst.Call, cst.Name))
        ):
            # `id % torch.cuda.device_count()`: a ZeroDivisionError where there is no GPU
            self.program.gpu_only_calls.append(node.right)
        if isinstance(node.operator, cst.Modulo) and left.kind is Kind.HOST:
            return operations.formatted(left, right)
        return operations.arithmetic(self, node, left, right, node.left, node.right)

    def _unary(self, node: cst.UnaryOperation) -> Value:
        value = self.expr(node.expression)
        if isinstance(node.operator, cst.Not):
            return conditions.negate(value)
        return value

    def _boolean(self, node: cst.BooleanOperation) -> Value:
        # its operands are conditions: a GPU flag reads as one (`args.cuda or args.mixmode`,
        # `args.no_cuda and args.mixmode and torch.cuda.is_available()`), also in an assignment
        left = self.test(node.left)
        right = self.test(node.right)
        return conditions.boolean(left, right, isinstance(node.operator, cst.And))

    def _comparison(self, node: cst.Comparison) -> Value:
        left = self.expr(node.left)
        values = [left]
        for target in node.comparisons:
            values.append(self.expr(target.comparator))
        value = operations.compare(self, node, values)
        if value.kind is Kind.HOST and value.truth is None and conditions.option_compared(self, node):
            # `return len(self.opt.gpu_ids) > 0` in a `use_gpu()` helper: the user's choice, wherever it is tested
            return operations.option_test(node, passed_count=self.is_parameter(node.left)) or value
        return value

    def is_parameter(self, node: cst.BaseExpression) -> bool:
        """`n_gpus` is a parameter of the function this frame runs: what its caller passes."""
        function = self.function
        return (
            isinstance(node, cst.Name)
            and function is not None
            and any(param.name.value == node.value for param in function.parameters())
        )

    def _if_exp(self, node: cst.IfExp) -> Value:
        test = self.test(node.test)
        known, flag = test.truth, test.flag
        if known is True:
            value = conditions.flagged(self.expr(node.body), flag)
            if (
                value.kind is Kind.HOST
                and value.truth is not None
                and test.cpu is False
                and conditions.is_constant(node.orelse)
            ):
                # `True if torch.cuda.is_available() else False`: a CPU-only machine takes the other side
                value = replace(value, cpu=self.expr(node.orelse).cpu)
            return value
        if known is False:
            return self.expr(node.orelse)
        return join(self.expr(node.body), self.expr(node.orelse))

    def _sequence(self, node: cst.Tuple | cst.List | cst.Set) -> Value:
        items = []
        for element in node.elements:
            value = self.expr(element.value)
            if isinstance(element, cst.StarredElement):
                return operations.struct(items=None, element=_rest_of(value).element)
            items.append(value)
        return operations.struct(items=tuple(items))

    def _dict(self, node: cst.Dict) -> Value:
        keys = []
        values = []
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self.expr(element.key)
                value = self.expr(element.value)
                values.append(value)
                if isinstance(element.key, cst.SimpleString):
                    keys.append((operations.string_of(element.key) or "", value))
            else:
                values.append(self.expr(element.value))
        element_value = None
        for value in values:
            element_value = join(element_value, value) if element_value is not None else value
        return operations.struct(keys=tuple(keys) if len(keys) == len(values) else None, element=element_value)

    def _comprehension(self, node: cst.BaseSimpleComp | cst.DictComp) -> Value:
        return operations.comprehension(self, node)

    def _constant(self, node: cst.BaseExpression) -> Value:
        return HOST

    def _string(self, node: cst.SimpleString) -> Value:
        text = operations.string_of(node)
        return replace(HOST, text=text) if text is not None else HOST

    def _lambda(self, node: cst.Lambda) -> Value:
        """Its body is read where it is written, its parameters unknown (`map(lambda x: x.cuda(),
        batch)`): a hard-coded CUDA there crashes as surely as one beside it."""
        saved = self.snapshot()
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.env[param.name.value] = UNKNOWN
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                self.env[extra.name.value] = UNKNOWN
        self.expr(node.body)
        self.restore((saved[0], self.heap))
        return Value(Kind.OTHER, Place.UNKNOWN, ref=node)

    def _named(self, node: cst.NamedExpr) -> Value:
        value = self.expr(node.value)
        self.bind(node.target, value, node)
        return value

    def _await(self, node: cst.Await) -> Value:
        self.expr(node.expression)
        return UNKNOWN

    def _starred(self, node: cst.StarredElement) -> Value:
        return self.expr(node.value)


def _annotated_a_number(annotation: cst.Annotation) -> bool:
    return isinstance(annotation.annotation, cst.Name) and annotation.annotation.value in ("float", "int")


def _partial(value: Value | None) -> Value:
    """A name bound on one path only: whatever it is, it may be unbound or different."""
    if value is None:
        return UNKNOWN
    if value.kind in (Kind.OTHER,) and (value.ref is not None or value.qual is not None):
        return value  # a def or an import on one path: still that thing where it exists
    return replace(value, place=Place.UNKNOWN, origins=frozenset()) if value.place is not Place.UNKNOWN else value


def _item(value: Value, index: int, count: int | None) -> Value:
    """The `index`-th item when a value is unpacked into `count` targets."""
    if value.items is not None and (count is None or len(value.items) == count) and index < len(value.items):
        return value.items[index]
    if value.kind is Kind.STRUCT and value.element is not None:
        return value.element
    if value.kind is Kind.TENSOR:
        return replace(value, member=False)
    return UNKNOWN


def _rest_of(value: Value) -> Value:
    element = value.element if value.kind is Kind.STRUCT and value.element is not None else UNKNOWN
    return operations.struct(element=element)


# by the node's exact type: each handler takes nodes of its own type
_STATEMENTS: dict[type[cst.CSTNode], Callable[[Frame, Any], None]] = {
    cst.SimpleStatementLine: Frame._simple,
    cst.If: Frame._if,
    cst.For: Frame._for,
    cst.While: Frame._while,
    cst.Try: Frame._try,
    cst.TryStar: Frame._try,
    cst.With: Frame._with,
    cst.FunctionDef: Frame._function_def,
    cst.ClassDef: Frame._class_def,
    cst.Match: Frame._match,
}

_EXPRESSIONS: dict[type[cst.CSTNode], Callable[[Frame, Any], Value]] = {
    cst.Name: Frame._name,
    cst.Attribute: Frame._attribute,
    cst.Call: Frame._call,
    cst.Subscript: Frame._subscript,
    cst.BinaryOperation: Frame._binary,
    cst.UnaryOperation: Frame._unary,
    cst.BooleanOperation: Frame._boolean,
    cst.Comparison: Frame._comparison,
    cst.IfExp: Frame._if_exp,
    cst.Tuple: Frame._sequence,
    cst.List: Frame._sequence,
    cst.Set: Frame._sequence,
    cst.Dict: Frame._dict,
    cst.ListComp: Frame._comprehension,
    cst.SetComp: Frame._comprehension,
    cst.GeneratorExp: Frame._comprehension,
    cst.DictComp: Frame._comprehension,
    cst.Integer: Frame._constant,
    cst.Float: Frame._constant,
    cst.Imaginary: Frame._constant,
    cst.SimpleString: Frame._string,
    cst.ConcatenatedString: Frame._constant,
    cst.FormattedString: Frame._constant,
    cst.Ellipsis: Frame._constant,
    cst.Lambda: Frame._lambda,
    cst.NamedExpr: Frame._named,
    cst.Await: Frame._await,
    cst.StarredElement: Frame._starred,
}

"""The device flow of one file: every scope evaluated, functions and classes linked.

`Program.run()` evaluates the module body, then every function in caller-first order, and
repeats (at most `MAX_PASSES` times) until what flows between scopes stops changing:
arguments at call sites (joined into the callee's parameters), return values, in-place
moves of modules handed to a function, and the attributes of class instances.

Methods of `nn.Module` subclasses are evaluated in the *module world*: the module's own
layers, parameters and buffers live on "the module's device" (Place.DEVICE, origin
"module"), a plain tensor attribute stays on the CPU, and a method parameter is on the
module's device once it is shown to meet the module's weights. Their callers never feed
them: how a module is written does not depend on one program that uses it.

Everything rules read is recorded here: `values` (each expression), `bound` (each binding),
`meetings`, `loaders`, `optimizers`, `loads`, `batch_accesses`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import libcst as cst

from devfix.analysis import arguments, calls, operations
from devfix.analysis import torch_api as api
from devfix.analysis.classes import ClassFlow
from devfix.analysis.classinfo import ClassInfo
from devfix.analysis.collect import Collected
from devfix.analysis.evaluate import Frame
from devfix.analysis.functions import FunctionFlow, FunctionInfo, infer_module_inputs, passed_arguments
from devfix.analysis.linking import Export, FunctionSummary, Linker
from devfix.analysis.names import NameFlow
from devfix.analysis.options import collect_options
from devfix.analysis.project import ProjectView
from devfix.analysis.tree import displayed_by_their_cells, first_failure, imports_torch, main_block_failure
from devfix.analysis.values import (
    HOST,
    UNKNOWN,
    Kind,
    Meeting,
    Obj,
    Origin,
    Place,
    Slot,
    Value,
    join,
    join_slots,
    members,
)

MAX_PASSES = 4
Args = list[tuple[cst.Arg, Value]]


@dataclass(eq=False)
class LoaderInfo:
    call: cst.Call
    dataset: Value
    dataset_node: cst.CSTNode | None
    pin: cst.Arg | None
    workers: bool
    spread: bool
    collate: bool


@dataclass(eq=False)
class OptimizerInfo:
    call: cst.Call
    qual: str
    module: Value | None  # the module whose parameters it gets, with its place at construction


class Program(NameFlow, ClassFlow, FunctionFlow):
    def __init__(
        self,
        data: Collected,
        assume_unmoved: frozenset[int] = frozenset(),
        assume_discarded_assigned: bool = False,
        linker: Linker | None = None,
        incoming: dict[str, dict[str, Value]] | None = None,
        path: str = "",
        view: ProjectView | None = None,
        kept_discards: frozenset[int] = frozenset(),
    ) -> None:
        view = view or ProjectView()
        self.data = data
        self.path = path
        # Top-level functions nothing in the run refers to (unused.py): they never run (reach.py).
        self.unreferenced = view.unreferenced
        # Top-level classes and functions that only GPU-only code of the run uses (users.py).
        self.gpu_only_users = view.gpu_only_users
        # It imports a CUDA extension the run builds (`CUDAExtension("mysigmoid", ...)`): GPU code.
        self.imports_cuda_extension = view.imports_cuda_extension
        self.cuda_extensions = view.cuda_extensions  # calls into them are GPU code by design (calls.py)
        # What every call in the run passes this file's script functions (callers.py).
        self.callers_pass = view.callers_pass
        # Its top-level classes and functions that other files of the run name (project.py).
        self.named_elsewhere = view.named_elsewhere
        self.named_by = view.named_by
        self.project_methods = view.methods
        self.init_only_methods = view.init_only_methods
        # The module statement that always raises (a missing project module, an unbound name):
        # nothing after it runs.
        self.first_failure = first_failure(data.module, data, view.missing_modules)
        self.main_failure = main_block_failure(data.module, data, view.missing_modules)
        # What callers in other project files pass to this file's top-level functions that no
        # call of this file reaches (their parameters are otherwise unknown).
        self.incoming = incoming or {}
        # The project's other files, as their summaries say (linking.py); None for a lone file.
        self.linker = linker
        self.linked_functions: dict[int, FunctionSummary] = {}
        self.linked: dict[int, Export] = {}  # the node of each linked class or function -> its summary
        # DEV011 turns `x.to(device)` alone on a line into `x = x.to(device)`: evaluate it so.
        self.assume_discarded_assigned = assume_discarded_assigned
        # ... but not these, whose moved copy would meet nothing on the device (discards.py)
        self.kept_discards = kept_discards
        # What-if evaluation: these `.to(...)`/`.cuda()` calls are taken as if removed (DEV006
        # asks what the program looks like once a dataset's transfers leave it).
        self.assume_unmoved = assume_unmoved
        self.module = data.module
        self.functions: dict[int, FunctionInfo] = {}
        self.classes: dict[int, ClassInfo] = {}
        self.options: dict[str, Value] = {}  # argparse options by dest (options.py)
        self.index_options: set[str] = set()  # `--device` options that hold a GPU index (`type=int`, `default=-1`)
        self.option_defaults: set[str] = set()  # names given as an option's default (`default=DEVICE`)
        self.namespace_devices: set[str] = set()
        self.module_env: dict[str, Value] = {}
        self.module_heap: dict[int, Slot] = {}
        self.heap_writes: dict[int, list[Slot]] = {}  # in-place moves of each module, anywhere
        self.children: dict[int, list[int]] = {}
        # the project classes of the modules given to a module's `__init__`, by (init, parameter):
        # `Seq2Seq(Encoder(), device)` holds an Encoder (None: modules of several classes)
        self.init_modules: dict[tuple[int, str], cst.ClassDef | None] = {}
        self._imports_torch: bool | None = None
        self.displayed_lines = displayed_by_their_cells(self.module)  # a notebook cell's shown last lines
        self.default_device_changed = False
        self.constructing = False
        self.call_sites_seen: dict[int, list[cst.Call]] = {}  # the call sites of the previous pass
        self._callers_memo: dict[int, set[int | None]] | None = None
        self.quiet_calls: set[int] = set()  # calls made under `torch.no_grad()` (their callee's too)
        self.escaped_functions: set[int] = set()  # functions named other than as a call's callee
        self._reset()
        self._collect_definitions()

    def _reset(self) -> None:
        """Recordings of one pass (the last pass's stand)."""
        self.values: dict[int, Value] = {}
        self.bound: dict[tuple[int, str], Value] = {}
        self.meetings: dict[int, Meeting] = {}
        self.loaders: dict[int, LoaderInfo] = {}
        self.loader_loops: dict[int, list[cst.CSTNode]] = {}  # loops that bind a loader's CPU batches
        self.loaders_iterated: set[int] = set()  # loaders some code of this file iterates
        self.loaders_escaped: set[int] = set()  # loaders handed to code devfix cannot see
        self.loop_iterables: dict[int, Value] = {}
        self.optimizers: list[OptimizerInfo] = []
        self.optimizer_loads: list[tuple[cst.Call, Value]] = []  # `opt.load_state_dict(...)`: its module, placed then
        self.loads: list[tuple[cst.Call, Args]] = []
        self.saves: list[tuple[cst.Call, Value]] = []
        self._device_params: dict[int, frozenset[str]] = {}
        self._cuda_switches: dict[int, frozenset[tuple[str, bool]]] = {}
        self._forwarded_switches: dict[int, frozenset[tuple[str, bool]]] = {}
        # `torch.cuda.current_device()`, an import of CUDA code in a function...: only a GPU answers (reach.py)
        self.gpu_only_calls: list[cst.CSTNode] = []
        self.settled_early: set[int] = set()  # functions evaluated when their class was first built (this pass)
        self.batch_accesses: dict[tuple[int, str], set[str]] = {}
        self.constructed: dict[int, Value] = {}
        self.ctc_losses: set[int] = set()  # CTC losses built here: their lengths stay on the CPU
        self.module_moves: list[tuple[cst.Call, Value, Place]] = []
        self.built_classes: dict[int, ClassInfo] = {}  # the project classes whose modules the program builds
        self.tensor_moves: list[
            tuple[cst.Call, Value, Place]
        ] = []  # `x.to(d)` on tensors: the call, the receiver, where to
        self.datasets: dict[int, tuple[cst.Call, Args]] = {}  # TensorDataset(...) calls by their identity
        self.call_sites: dict[int, list[cst.Call]] = {}  # FunctionDef id -> the calls of it
        self.constructions: dict[int, list[cst.Call]] = {}  # a module class's `__init__` id -> its builds
        self._calls_by_name: dict[str, list[cst.Call]] | None = None  # the file's calls of a bare name
        self.discarded_moves: list[cst.Expr] = []  # `x.to(device)` statements on tensors (DEV011)
        self.linked_calls: list[tuple[FunctionSummary, dict[str, Value] | None]] = []  # calls of other files' functions
        self.evaluated: set[int] = set()
        self.module_done = False  # the module's own statements were evaluated in this pass
        self.passed_names: frozenset[str] | None = None  # names some call passes as an argument (evaluate.py)

    # -- definitions -------------------------------------------------------------------------------
    def _collect_definitions(self) -> None:
        data = self.data
        for node in data.functions:
            scope = data.scopes[id(node)]
            info = FunctionInfo(node, scope)
            self.functions[id(node)] = info
        self.options, self.index_options, self.option_defaults = collect_options(self.data.calls)

    # -- names: what a name is bound to, imports and linked project files (names.py) --
    def rebind_origins(self, value: Value, name: str, binder: cst.CSTNode, loop: cst.CSTNode | None) -> Value:
        """A batch (or part of one) bound to a variable: the fix moves it under that name, where
        the loop (or the `x, y = batch` line, or `x, y = next(it)`) binds it."""
        if value.place is not Place.CPU or not value.origins:
            return value
        batches = [o for o in value.origins if o.kind == "batch"]
        if not batches or len(batches) != len(value.origins) or len({o.source for o in batches}) != 1:
            return value
        first = batches[0]
        fresh = first.binder is None  # straight from the loader, not yet bound to a variable
        if not (fresh or isinstance(binder, (cst.For, cst.CompFor)) or _unpacks(binder)):
            return value
        if isinstance(binder, cst.CompFor):
            return value  # moved (or not) inside the comprehension
        if isinstance(binder, cst.For):
            loop = binder
        origin = Origin("batch", binder, name=name, loop=loop, binder=binder, source=first.source)
        if first.source is not None and loop is not None:
            loops = self.loader_loops.setdefault(first.source, [])
            if loop not in loops:
                loops.append(loop)
        return _retag(value, origin)

    def note_access(self, value: Value, how: str) -> None:
        for origin in value.origins:
            if origin.kind == "batch" and origin.binder is not None and origin.name is not None:
                self.batch_accesses.setdefault((id(origin.binder), origin.name), set()).add(how)

    # -- meetings ------------------------------------------------------------------------------------
    def meet(
        self,
        node: cst.CSTNode,
        kind: str,
        operands: Iterable[tuple[cst.CSTNode, Value]],
        module: Value | None = None,
        detail: str = "",
    ) -> None:
        if self.constructing:
            return  # a module's own construction: every weight is still on the CPU, nothing can clash
        meeting = Meeting(node, kind, tuple(operands), module=module, detail=detail)
        previous = self.meetings.get(id(node))
        if (
            previous is not None
            and previous.conflict()
            and not meeting.conflict()
            and _only_vaguer(previous, meeting)
            and not self._in_module_world(node)
        ):
            # a program's loop: its next pass joins what its first pass met
            # (`acc = torch.cat([acc, out])` after `acc = torch.tensor([])`), and the first pass
            # has already failed. (A module's own methods keep DEV007's single-pass view.)
            return
        self.meetings[id(node)] = meeting
        infer_module_inputs(self.functions, meeting)

    def _in_module_world(self, node: cst.CSTNode) -> bool:
        parent = self.data.parent.get(id(node))
        while parent is not None and not isinstance(parent, cst.FunctionDef):
            parent = self.data.parent.get(id(parent))
        info = self.functions.get(id(parent)) if parent is not None else None
        return info is not None and info.world == "module"

    # -- modules ---------------------------------------------------------------------------------------
    def construct(
        self,
        frame: Frame,
        node: cst.Call,
        *,
        neutral: bool,
        place: Place = Place.CPU,
        cls: ClassInfo | None = None,
        children: tuple[Obj, ...] = (),
        origins: frozenset[Origin] | None = None,
    ) -> Value:
        obj = id(node)
        if place is Place.CPU and frame.device_context:
            place, origins = Place.UNKNOWN, frozenset()  # built under `with device:`, wherever that is
        if origins is None:
            origins = frozenset({Origin("construct", node)}) if place is Place.CPU else frozenset()
        value = Value(Kind.MODULE, place, origins, obj=obj, neutral=neutral, cls=cls.node if cls is not None else None)
        frame.heap[obj] = (place, origins)
        if cls is not None:
            self.built_classes[id(cls.node)] = cls
        if children:
            # a held module that two paths built (a frozenset of ids, see `members`) is not followed
            self.children[obj] = [child for child in children if isinstance(child, int)]
        self.constructed[obj] = value
        return value

    def made_in(self, value: Value, loop: cst.CSTNode) -> bool:
        """Some origin of `value` lies inside `loop` (made anew at each iteration)."""
        for origin in value.origins:
            parent = self.data.parent.get(id(origin.node))
            while parent is not None:
                if parent is loop:
                    return True
                parent = self.data.parent.get(id(parent))
        return False

    def module_method(self, frame: Frame, node: cst.Call, receiver: Value, name: str, args: Args) -> Value:
        # `net.type(self.dtype)` with a CUDA tensor type casts the weights onto the GPU, as a move does
        if name in api.MOVE_METHODS or name == "cpu" or (name == "type" and args):
            place, origin = calls.move(frame, node, receiver, name, args)
            if place is Place.NONE:
                return receiver
            origins = frozenset({origin}) if origin is not None else frozenset()
            frame.set_place(receiver.obj, place, origins)
            self.module_moves.append((node, receiver, place))
            moved = replace(receiver, place=place, origins=origins if place is not Place.UNKNOWN else frozenset())
            target = node.func.value if isinstance(node.func, cst.Attribute) else None
            if receiver.obj is None and isinstance(target, cst.Name) and target.value in frame.env:
                frame.env[target.value] = moved  # `model.cpu()` on a parameter: moved in place all the same
            return moved
        if name in ("parameters", "named_parameters", "buffers"):
            return Value(
                Kind.STRUCT,
                receiver.place,
                receiver.origins,
                bound=receiver,
                element=Value(Kind.TENSOR, receiver.place, receiver.origins, grad=True),
            )
        if name in (
            "train",
            "eval",
            "float",
            "double",
            "half",
            "bfloat16",
            "requires_grad_",
            "share_memory",
            "apply",
            "zero_grad",
            "type",
        ):
            return receiver
        if (
            name in ("load_state_dict", "state_dict", "register_buffer", "register_parameter")
            or name in api.MODULE_BOOKKEEPING
        ):
            return HOST if name != "state_dict" else UNKNOWN
        if name == "forward" or name == "__call__":
            return calls.module_call(frame, node, receiver, args)
        cls = self.classes.get(id(receiver.cls)) if receiver.cls is not None else None
        if cls is not None:
            method = cls.method(name)
            if method is not None:
                return self.call_function(frame, node, self.functions[id(method)], args, bound=receiver)
            linked = cls.linked_method(name)
            if linked is not None:
                return self.call_linked_method(frame, node, linked, receiver, args)
        if cls is not None and cls.sets_attributes_wholesale and name not in api.NN_MODULE_METHODS:
            # an attribute set at run time: `self.frozen_func(x=...)` after `self.__dict__.update(locals())`
            arguments.escape_all(frame, args)
            return UNKNOWN
        if receiver.place is Place.UNKNOWN or self._project_method(name):
            # `segan.generate(x)` where `segan` is one of two project models: what the method
            # returns (a NumPy array, a tuple) is its own, not a forward pass's
            arguments.escape_all(frame, args)
            return UNKNOWN
        # a method of a module of unknown class (`model.generate(ids)`, `model.encode(x)`)
        return calls.module_call(frame, node, receiver, args)

    @property
    def imports_torch(self) -> bool:
        """The file imports torch: a file devfix's rules fix (not a helper that never names it)."""
        if self._imports_torch is None:
            self._imports_torch = imports_torch(self.data)
        return self._imports_torch

    def _project_method(self, name: str) -> bool:
        """A project class that the program builds defines a method `name`, or (several files)
        some file of the run defines one."""
        return name in self.project_methods or any(
            cls.method(name) is not None or cls.linked_method(name) is not None for cls in self.built_classes.values()
        )

    # -- data ------------------------------------------------------------------------------------------------
    def loader(self, frame: Frame, node: cst.Call, args: Args) -> Value:
        dataset_arg = arguments.keyword(args, "dataset") or (
            arguments.positional(args)[0] if arguments.positional(args) else None
        )
        dataset = dataset_arg[1] if dataset_arg is not None else UNKNOWN
        pin = arguments.keyword(args, "pin_memory")
        workers = arguments.keyword(args, "num_workers")
        collate = arguments.keyword(args, "collate_fn") is not None
        info = LoaderInfo(
            node,
            dataset,
            dataset_arg[0].value if dataset_arg is not None else None,
            pin[0] if pin else None,
            workers is not None and not (isinstance(workers[0].value, cst.Integer) and workers[0].value.value == "0"),
            any(arg.star == "**" for arg, _ in args),
            collate,
        )
        self.loaders[id(node)] = info
        if collate:
            element = UNKNOWN
        elif dataset.kind is Kind.DATASET and dataset.element is not None:
            element = _cpu_batch(dataset.element)
        elif dataset.kind is Kind.DATASET and dataset.place is Place.UNKNOWN:
            element = UNKNOWN
        else:
            element = Value(Kind.STRUCT, Place.CPU, element=Value(Kind.TENSOR, Place.CPU))
        return Value(Kind.LOADER, element.place, obj=id(node), element=element)

    def optimizer(self, frame: Frame, node: cst.Call, qual: str, args: Args) -> Value:
        module = None
        for _, value in args[:1]:
            module = calls.optimizer_params(value)
        self.optimizers.append(OptimizerInfo(node, qual, frame.place_of(module) if module is not None else None))
        return Value(Kind.OPTIMIZER, Place.UNKNOWN, bound=module)  # `bound`: the module whose parameters it holds

    def load(self, frame: Frame, node: cst.Call, args: Args) -> Value:
        self.loads.append((node, args))
        location = arguments.keyword(args, "map_location")
        if location is None and len(arguments.positional(args)) > 1:
            location = arguments.positional(args)[1]
        place = arguments.target_place(location[1], location[0].value) if location is not None else Place.UNKNOWN
        if place is Place.NONE:
            place = Place.UNKNOWN
        # a checkpoint holds anything: tensors, a state dict, a whole pickled module, numbers
        return Value(Kind.STRUCT, place, element=UNKNOWN)

    def parser_method(self, frame: Frame, node: cst.Call, name: str, args: Args) -> Value:
        if name in ("parse_args", "parse_known_args"):
            namespace = Value(Kind.OTHER, Place.UNKNOWN, attrs=tuple(self.options.items()))
            if name == "parse_known_args":
                return operations.struct(items=(namespace, UNKNOWN))
            return namespace
        return HOST if name == "add_argument" else UNKNOWN

    # -- the fixpoint -------------------------------------------------------------------------------------------
    def _runs(self, body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """The module's statements that run: none after one that always raises NameError."""
        broken = self.first_failure
        statements = list(body)
        return statements[: statements.index(broken)] if broken is not None else statements

    def run(self) -> None:
        previous = None
        first = True
        for _ in range(MAX_PASSES):
            self._reset()
            for info in self.functions.values():
                info.pending = {}
                info.pending_left = set()
                info.pending_calls = 0
                info.pending_globals = None
            for klass in self.classes.values():
                klass.writes = {}
            module_frame = Frame(self, self.module, self.data.module_scope)
            module_frame.statements(self._runs(self.module.body))
            self.module_env = module_frame.env
            self.module_heap = module_frame.heap
            self.module_done = True
            for info in self._function_order():
                if id(info.node) in self.settled_early:
                    continue  # evaluated already in this pass, when its class was first built
                self._evaluate_function(info)
                if first and info.klass is not None and info.name == "__init__" and info.klass.linked is None:
                    # the first pass: the other methods see what `__init__` set (`self.fc0`) now,
                    # rather than in a second pass
                    self._settle_attributes(info.klass)
            first = False
            signature = self._settle()
            if signature == previous:
                break
            previous = signature

    def _function_order(self) -> list[FunctionInfo]:
        """Callers before callees where the file's own calls say so; the rest in file order."""
        order: list[FunctionInfo] = []
        seen: set[int] = set()
        by_name: dict[str, list[FunctionInfo]] = {}
        for info in self.functions.values():
            by_name.setdefault(info.name, []).append(info)
        callees: dict[int, list[FunctionInfo]] = {}
        owner_of = self.owner_function
        roots: list[FunctionInfo] = []
        for call in self.data.calls:
            name = (
                call.func.value
                if isinstance(call.func, cst.Name)
                else (call.func.attr.value if isinstance(call.func, cst.Attribute) else None)
            )
            if name is None or name not in by_name:
                continue
            owner = owner_of(call)
            for target in by_name[name]:
                if owner is None:
                    roots.append(target)
                else:
                    callees.setdefault(id(owner), []).append(target)
        stack = list(reversed(roots))
        while stack:
            info = stack.pop()
            if id(info.node) in seen:
                continue
            seen.add(id(info.node))
            order.append(info)
            stack.extend(reversed(callees.get(id(info.node), [])))
        for info in self.functions.values():
            if id(info.node) not in seen:
                seen.add(id(info.node))
                order.append(info)
                for callee in callees.get(id(info.node), []):
                    if id(callee.node) not in seen:
                        seen.add(id(callee.node))
                        order.append(callee)
        return order

    def owner_function(self, node: cst.CSTNode) -> FunctionInfo | None:
        """The file's function whose body holds `node` (None at module level)."""
        parent = self.data.parent.get(id(node))
        while parent is not None:
            if isinstance(parent, cst.FunctionDef):
                return self.functions.get(id(parent))
            parent = self.data.parent.get(id(parent))
        return None

    def _evaluate_function(self, info: FunctionInfo) -> None:
        if self._callers_done(info):
            # every caller ran already in this pass: what they passed now, not one pass later
            info.args = passed_arguments(info)
            info.calls = info.pending_calls
        # called only from the module's own code, which ran already: its globals are what those
        # calls saw (a model rebound to a fresh CPU one after `train()` is not the one it trained)
        only_module = self._static_callers().get(id(info.node)) == {None}
        info.call_globals = info.pending_globals if only_module and self._callers_done(info) else None
        env: dict[str, Value] = {}
        heap = dict(self.module_heap)
        for obj, slots in self.heap_writes.items():
            # moved in place somewhere: at a function's start it may be on either side
            merged = heap.get(obj)
            for slot in slots:
                merged = join_slots(merged, slot)
            if merged is not None:
                heap[obj] = merged
        params = info.parameters()
        for param in params:
            name = param.name.value
            value = env[name] = self.parameter_value(info, param)
            if value.kind is Kind.MODULE and value.obj is not None:
                for member in members(value.obj):
                    heap[member] = (value.place, value.origins)
        for extra in (info.node.params.star_arg, info.node.params.star_kwarg):
            if isinstance(extra, cst.Param):
                env[extra.name.value] = UNKNOWN
        if info.klass is not None and info.self_name is not None:
            env[info.self_name] = self.self_value(info)
        frame = Frame(self, info.node, info.scope, function=info, world=info.world, env=env, heap=heap)
        for decorator in info.node.decorators:
            # `@torch.no_grad()`, `@torch.inference_mode()`: the whole body computes without grad
            value = self.values.get(id(decorator.decorator), UNKNOWN)
            if operations.is_no_grad_context(frame, decorator.decorator, value):
                frame.no_grad += 1
        if not frame.no_grad and self._called_only_without_grad(info):
            frame.no_grad += 1
        before = {name: env[name] for name in env}
        self.constructing = info.world == "module" and self.construction_time(info)
        try:
            frame.block(info.node.body)
        finally:
            self.constructing = False
        info.returns = frame.returns if frame.returns is not None else HOST
        info.tuples_returned = frame.tuples_returned
        self._record_param_moves(info, frame, before)
        self.evaluated.add(id(info.node))

    def _called_only_without_grad(self, info: FunctionInfo) -> bool:
        """Every call of the function is made under `torch.no_grad()` (a plotting helper of a
        `@torch.no_grad()` method), and nothing else can call it: it computes without grad."""
        sites = self.call_sites_seen.get(id(info.node), [])
        return (
            bool(sites)
            and all(id(site) in self.quiet_calls for site in sites)
            and id(info.node) not in self.escaped_functions
            and not self.called_elsewhere(info)
            and info.klass is None  # a method may also be handed on as `self.method`, unseen
        )

    def _callers_done(self, info: FunctionInfo) -> bool:
        """A plain function of this file whose callers here (the scopes whose code names it in
        a call) were all evaluated in this pass, and that is not handed on as a value.
        (`arguments_of` still treats what this file's calls pass as it does after a pass.)"""
        if info.klass is not None or info.world != "program" or id(info.node) in self.escaped_functions:
            return False
        owners = self._static_callers().get(id(info.node))
        if not owners:
            return False
        return all(self.module_done if owner is None else owner in self.evaluated for owner in owners)

    def unreached_calls(self, info: FunctionInfo) -> list[cst.Call]:
        """The file's calls by name of a plain function none of whose calls the flow reached
        (`train(...)` after `if args.evaluate: validate(...); return` under an option that is
        always on): where to ask whether it runs. Empty for a function handed on as a value,
        named by another file, or called somewhere the flow went."""
        if (
            info.klass is not None
            or info.world != "program"
            or self.call_sites.get(id(info.node))
            or id(info.node) in self.escaped_functions
            or info.name in self.named_elsewhere
        ):
            return []
        if self._calls_by_name is None:
            self._calls_by_name = {}
            for call in self.data.calls:
                if isinstance(call.func, cst.Name):
                    self._calls_by_name.setdefault(call.func.value, []).append(call)
        return self._calls_by_name.get(info.name, [])

    def _static_callers(self) -> dict[int, set[int | None]]:
        """Per function of the file: the functions (None: the module's own code) whose calls
        name it, once per file."""
        if self._callers_memo is None:
            by_name: dict[str, list[FunctionInfo]] = {}
            for info in self.functions.values():
                by_name.setdefault(info.name, []).append(info)
            callers: dict[int, set[int | None]] = {}
            for call in self.data.calls:
                func = call.func
                name = (
                    func.value
                    if isinstance(func, cst.Name)
                    else (func.attr.value if isinstance(func, cst.Attribute) else None)
                )
                if name is None or name not in by_name:
                    continue
                owner = self.owner_function(call)
                for target in by_name[name]:
                    if isinstance(func, cst.Attribute) and target.klass is None:
                        continue  # `net.train()` is a method of something, never the file's `train`
                    callers.setdefault(id(target.node), set()).add(id(owner.node) if owner is not None else None)
            self._callers_memo = callers
        return self._callers_memo

    def construction_time(self, info: FunctionInfo, seen: frozenset[int] = frozenset()) -> bool:
        """A module's `__init__`, or a method only ever called from `__init__` methods (CCT's
        `sequence_length` runs a dummy forward while building), or from such methods (an echo
        state network's `reset_parameters`, then `_reset_weight_res`): it runs before any `.to()`."""
        if info.name == "__init__":
            return True
        sites = self.call_sites_seen.get(id(info.node), [])
        if not sites:
            # called by subclasses of other files while they build (a base model's feature-size probe)
            return info.klass is not None and info.name in self.init_only_methods
        return all(self._in_init(site, seen | {id(info.node)}) for site in sites)

    def _in_init(self, node: cst.CSTNode, seen: frozenset[int]) -> bool:
        owner = self.owner_function(node)
        if owner is None or id(owner.node) in seen:
            return False
        return owner.name == "__init__" or self.construction_time(owner, seen)

    def _record_param_moves(self, info: FunctionInfo, frame: Frame, before: dict[str, Value]) -> None:
        info.param_moves = {}
        for name, value in before.items():
            slot = frame.slot_of(value.obj) if value.kind is Kind.MODULE and value.obj is not None else None
            if slot is not None and slot[0] is not value.place:
                info.param_moves[name] = slot

    def _settle(self) -> tuple[object, ...]:
        """Move this pass's call sites and attribute writes into what the next pass reads;
        return a signature of everything that flows between scopes."""
        self.call_sites_seen = dict(self.call_sites)
        parts: list[tuple[object, ...]] = []
        for info in self.functions.values():
            info.host_params = self._host_parameters(info)
            info.args = passed_arguments(info)
            info.calls = info.pending_calls
            parts.append(
                (
                    id(info.node),
                    info.calls > 0,  # only whether it is called is read, not how often
                    tuple(sorted((k, _signature(v)) for k, v in info.args.items())),
                    _signature(info.returns),
                    tuple(sorted(info.module_inputs)),
                    tuple(sorted(info.host_params)),
                    tuple(sorted((k, int(v[0])) for k, v in info.param_moves.items())),
                )
            )
        for klass in self.classes.values():
            if klass.linked is not None:
                continue  # a class of another file: its summary's attributes stand
            self._settle_attributes(klass)
            attrs = klass.attrs
            klass.buffers |= self._registrations(klass)
            klass.moves_inputs = klass.moves_inputs or self._moves_inputs(klass)
            parts.append(
                (id(klass.node), klass.moves_inputs, tuple(sorted((k, _signature(v)) for k, v in attrs.items())))
            )
        parts.append(tuple(sorted((k, id(v)) for k, v in self.init_modules.items())))
        return tuple(parts)

    def settle_constructor(self, info: FunctionInfo, then: FunctionInfo | None = None) -> None:
        """The first pass builds an instance of a class whose attributes no pass has settled:
        its `__init__` once, now, so that the instance's layers are known (without any, a model
        would be taken for a parameter-free module) without waiting for a second pass; `then`
        (a dataset's `__getitem__`) after it, reading them."""
        klass = info.klass
        assert klass is not None
        klass.settled = True  # once: a class that builds an instance of itself does not recurse
        constructing = self.constructing
        try:
            self._evaluate_function(info)
            self._settle_attributes(klass)
            self.settled_early.add(id(info.node))
            if then is not None:
                self._evaluate_function(then)
                self.settled_early.add(id(then.node))
        finally:
            self.constructing = constructing

    def _settle_attributes(self, klass: ClassInfo) -> None:
        """The class's attributes, each the join of what this pass wrote to it."""
        attrs: dict[str, Value] = {}
        writes_seen = {}
        known_objects = set()
        for name, writes in klass.writes.items():
            writes = self._tensor_or_none(klass, writes)
            value: Value | None = None
            for _, written in writes:
                value = join(value, written) if value is not None else written
            attrs[name] = value or UNKNOWN
            writes_seen[name] = [target for target, _ in writes]
            if writes and all(written.kind is Kind.OTHER and written.cls is not None for _, written in writes):
                known_objects.add(name)
        klass.attrs = attrs
        klass.writes_seen = writes_seen
        klass.known_objects = frozenset(known_objects)
        klass.settled = True


def _signature(value: Value | None) -> tuple[object, ...]:
    if value is None:
        return ()
    items = tuple(_signature(v) for v in value.items) if value.items else ()
    return (
        value.kind.value,
        int(value.place),
        value.obj,
        value.neutral,
        items,
        _signature(value.element) if value.element is not None and value.element is not value else (),
    )


def _retag(value: Value, origin: Origin) -> Value:
    """A batch bound to a variable: it and every CPU tensor in it now come from that variable."""
    if value.place is not Place.CPU and value.kind is not Kind.STRUCT:
        return value
    items = tuple(_retag(i, origin) for i in value.items) if value.items is not None else None
    keys = tuple((k, _retag(v, origin)) for k, v in value.keys) if value.keys else None
    element = (
        _retag(value.element, origin) if value.element is not None and value.element is not value else value.element
    )
    origins = frozenset({origin}) if value.place is Place.CPU else value.origins
    return replace(value, origins=origins, items=items, keys=keys, element=element)


def _unpacks(binder: cst.CSTNode) -> bool:
    """`x, y = batch`, `x = batch[0]`, `x, y = next(it)`: a batch taken apart, not computed on."""
    if not isinstance(binder, cst.Assign):
        return False
    value = binder.value
    if isinstance(value, cst.Subscript):
        value = value.value
    if isinstance(value, cst.Call):
        return isinstance(value.func, cst.Name) and value.func.value == "next"
    return isinstance(value, cst.Name)


def _cpu_batch(element: Value) -> Value:
    """What a loader yields from what its dataset returns: the default collate stacks samples
    into new tensors, so a CPU tensor of the dataset is a fresh CPU tensor of the batch (its
    origin is set where the loop binds it); tensors the dataset placed keep their place."""
    if element.kind is Kind.TENSOR:
        return Value(Kind.TENSOR, Place.CPU) if element.place is Place.CPU else element
    if element.kind is Kind.STRUCT:
        items = tuple(_cpu_batch(i) for i in element.items) if element.items is not None else None
        keys = tuple((k, _cpu_batch(v)) for k, v in element.keys) if element.keys else None
        inner = _cpu_batch(element.element) if element.element is not None and element.element is not element else None
        return operations.struct(items=items, keys=keys, element=inner if items is None and keys is None else None)
    if element.kind is Kind.HOST:
        return Value(Kind.TENSOR, Place.CPU)  # numbers and arrays are collated into CPU tensors
    return element


def _only_vaguer(previous: Meeting, meeting: Meeting) -> bool:
    """`meeting` is `previous` with some definite places become unknown, nothing contradicted."""
    if len(previous.operands) != len(meeting.operands) or previous.kind != meeting.kind:
        return False
    for (_, old), (_, new) in zip(previous.operands, meeting.operands):
        if new.place is not old.place and not (new.place is Place.UNKNOWN and not new.origins):
            return False
    return True

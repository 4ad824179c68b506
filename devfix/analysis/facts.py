"""FileFacts: what devfix knows about one file, computed once and read by every rule.

The layers, each importing only the ones below it:

    tree       collect.py, scopes.py, tree.py   syntax: parents, scopes, bindings, positions
    vocabulary torch_api.py                      what a resolved torch name is
    flow       values.py, evaluate.py, calls.py, names.py, options.py, classes.py, program.py
                                                 where each value lives (CPU / device / unknown)
    decisions  plan.py, devices.py, datasets.py  what must move, with which device expression
    facade     facts.py                          this file: built lazily, cached

Rules read `facts.program` (values, meetings, loaders), `facts.plan` (the origins to move, by
rule), `facts.devices` (the device expression for a fix) and `facts.loader_plans`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import libcst as cst

from devfix.analysis.collect import Collected
from devfix.analysis.datasets import LoaderPlan, Transfer, class_transfers, plan_loaders, settle
from devfix.analysis.devices import Devices
from devfix.analysis.discards import unneeded_discards
from devfix.analysis.layout import Original
from devfix.analysis.linking import ClassSummary, Linker, LoaderVerdict, ModuleSummary, exported
from devfix.analysis.plan import Plan
from devfix.analysis.program import Program
from devfix.analysis.project import ProjectView
from devfix.analysis.reach import after_an_exit, never_runs
from devfix.analysis.summarize import moves_items_for as summarize_moves_items_for
from devfix.analysis.summarize import summarize
from devfix.analysis.tree import Tree, chosen_gpu, cuda_index, imports_torch
from devfix.analysis.values import Kind, Place, Value, on_host_only


class FileFacts:
    def __init__(
        self,
        module: cst.Module,
        *,
        device_style: str = "conditional",
        dataset_placement: str = "pinned",
        allow_device_declarations: bool = True,
        assume_discarded_assigned: bool = True,
        gpus_chosen_elsewhere: bool = False,
        gpu_choice_functions: frozenset[str] = frozenset(),
        linker: Linker | None = None,
        incoming: dict[str, dict[str, Value]] | None = None,
        path: str = "",
        view: ProjectView | None = None,
        original: Original | None = None,
    ) -> None:
        self.module = module
        self.view = view or ProjectView()
        self.linker = linker
        self.incoming = incoming
        self.path = path
        self.gpus_chosen_elsewhere = gpus_chosen_elsewhere
        self.gpu_choice_functions = gpu_choice_functions
        self.tree = Tree(module, original=original)
        self.device_style = device_style
        self.dataset_placement = dataset_placement
        self.allow_device_declarations = allow_device_declarations
        self.assume_discarded_assigned = assume_discarded_assigned
        self.kept_discards: frozenset[int] = frozenset()

    def learn_gpu_only_users(self, names: frozenset[str]) -> None:
        """The file's names only GPU-only code uses, as the engine's latest round found them.
        Only reach.py's questions read them, never the flow: the evaluation stands."""
        self.view = replace(self.view, gpu_only_users=names)
        self.program.gpu_only_users = names

    @property
    def data(self) -> Collected:
        return self.tree.data

    # -- the flow, with datasets settled ----------------------------------------------------------
    @cached_property
    def _settled(self) -> tuple[Program, Plan, dict[int, LoaderPlan]]:
        """Evaluate the program; where a dataset should lose its device transfers (DEV006),
        evaluate it again as if they were gone, and keep a transfer out only if every loop
        over its loader then gets its batches onto the device."""
        program = self._run(frozenset())
        kept = unneeded_discards(program)
        if kept:
            # DEV011 assigns only the discarded moves whose copy is needed: evaluate the others
            # as written, so that no rule fixes a meeting only the assignment would make
            self.kept_discards = kept
            program = self._run(frozenset())
        loader_plans = plan_loaders(self.tree, program, self.dataset_placement)
        hoisted = _hoisted(loader_plans)
        plan: Plan | None = None
        if hoisted:
            candidate = self._run(hoisted)
            candidate_plan = Plan(self.tree, candidate)
            for loader_plan in loader_plans.values():
                if loader_plan.hoist and not _loops_move(candidate, candidate_plan, loader_plan):
                    settle(loader_plan, self.dataset_placement, loops_move=False, writes_transfers=False)
            _block_everywhere(loader_plans)
            kept = _hoisted(loader_plans)
            if kept == hoisted:
                program, plan = candidate, candidate_plan
            elif kept:
                program = self._run(kept)
        if plan is None:
            plan = Plan(self.tree, program)
        for key, loader_plan in loader_plans.items():
            writes = any(m.fixable and m.origin.source == key for m in plan.by_rule("DEV004"))
            settle(loader_plan, self.dataset_placement, loops_move=True, writes_transfers=writes)
        return program, plan, loader_plans

    def _run(self, assume_unmoved: frozenset[int]) -> Program:
        program = Program(
            self.tree.data,
            assume_unmoved,
            self.assume_discarded_assigned,
            self.linker,
            self.incoming,
            self.path,
            self.view,
            self.kept_discards,
        )
        program.run()
        return program

    @cached_property
    def loader_verdicts(self) -> list[tuple[LoaderVerdict, dict[str, Value] | None]]:
        """For each dataset class of another file whose `__getitem__` transfers this file's
        loaders may take over: whether they do (their loops move the batches), as a call of
        that class for its file's second pass (`linking.join_incoming`)."""
        verdicts: dict[int, tuple[ClassSummary, bool]] = {}
        for loader_plan in self.loader_plans.values():
            for transfer in loader_plan.hoist + loader_plan.blocked:
                if transfer.linked is not None:
                    key = id(transfer.linked.node)
                    taken = transfer in loader_plan.hoist and verdicts.get(key, (transfer.linked, True))[1]
                    verdicts[key] = (transfer.linked, taken)
        return [
            (LoaderVerdict(summary.path, summary.node.name.value), {"batches": _verdict(taken)})
            for summary, taken in verdicts.values()
        ]

    @cached_property
    def transfers_taken_over(self) -> list[tuple[Transfer, str]]:
        """The `__getitem__` transfers of this file's dataset classes that the one other file
        using them takes over in its loops (`loader_verdicts` there, read here as incoming),
        each with that file's path."""
        found: list[tuple[Transfer, str]] = []
        program = self.program
        for klass in program.classes.values():
            if klass.linked is not None or klass.kind != "dataset":
                continue
            verdict = (self.incoming or {}).get(LoaderVerdict(self.path, klass.node.name.value).key, {}).get("batches")
            if verdict is None or verdict.kind is not Kind.LOADER or verdict.place is not Place.CPU:
                continue
            reader = summarize_moves_items_for(self.tree, program, klass)
            if reader:
                found.extend((transfer, reader) for transfer in class_transfers(self.tree, program, klass))
        return found

    @property
    def program(self) -> Program:
        return self._settled[0]

    @property
    def plan(self) -> Plan:
        return self._settled[1]

    @property
    def loader_plans(self) -> dict[int, LoaderPlan]:
        return self._settled[2]

    @cached_property
    def devices(self) -> Devices:
        return Devices(
            self.tree,
            self.program,
            style=self.device_style,
            allow_declarations=self.allow_device_declarations,
            gpus_chosen_elsewhere=self.gpus_chosen_elsewhere,
            gpu_choice_functions=self.gpu_choice_functions,
            scripted=self.view.scripts_modules,
        )

    # -- small shared questions ----------------------------------------------------------------------
    @cached_property
    def uses_torch(self) -> bool:
        """The file imports torch, or calls `.cuda()` on what its project's modules give it."""
        if imports_torch(self.tree.data):
            return True
        return any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "cuda" for c in self.tree.data.calls)

    def is_cuda_move(self, call: cst.Call) -> bool:
        """`x.cuda()`, `x.cuda(0)`, `x.cuda(device=0)`, `x.cuda(non_blocking=True)` on a value (not `torch.cuda` itself,
        nor a project class's own `cuda()`); not `.cuda(args.gpu)` / `.cuda(rank)`, a device
        index chosen on purpose, nor `.cuda(1)`, a GPU picked on purpose (tree.chosen_gpu). `call` is
        a call of a `.cuda` attribute."""
        receiver = self.value(cst.ensure_type(call.func, cst.Attribute).value)
        if receiver is not None and receiver.qual is not None:
            return False
        if receiver is not None and self.program.defines_method(receiver, "cuda"):
            return False  # the project's own `cuda()` (a sampler class, an override): not torch's move
        if self.view.own_cuda_objects and _of_unknown_kind(receiver):
            # maybe a plain class's own `cuda()`, with no `.to()` (XLM's SentenceEmbedder, a
            # video-representation `Framework` handed to `train(framework)`)
            return False
        if chosen_gpu(cuda_index(call)):
            return False
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        return len(positional) + ("device" in keywords) <= 1 and keywords <= {"device", "non_blocking", "memory_format"}

    @cached_property
    def uses_device(self) -> bool:
        """Something in this file is definitely put on the accelerator (evidence for rules that
        guard against GPU checkpoints and the like): a move the flow placed, a device bound, or a
        `.cuda()` the flow evaluated on a value it cannot follow (`run_path(...)["Net"]().cuda()`)."""
        program = self.program
        if any(place is Place.DEVICE for _, _, place in program.module_moves + program.tensor_moves):
            return True
        if any(
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "cuda"
            and self.value(call) is not None
            and self.is_cuda_move(call)
            for call in self.tree.data.calls
        ):
            return True
        return any(
            v.kind is Kind.DEVICE and v.place is Place.DEVICE and v.flag in ("available", "hard", "choice")
            for v in program.bound.values()
        )

    def in_dead_code(self, node: cst.CSTNode) -> bool:
        """`node` lies in a function or method nothing in the run calls (a notebook's class that
        no cell builds, a script's function no file names), or after the module's own exit: a
        bug there crashes nobody, and an edit there fixes nothing anyone runs."""
        return after_an_exit(self.tree, self.program, node) or any(
            isinstance(ancestor, cst.FunctionDef) and never_runs(self.tree, self.program, ancestor)
            for ancestor in self.tree.ancestors(node)
        )

    def in_torchscript(self, node: cst.CSTNode) -> bool:
        """`node` lies in code TorchScript compiles: a function decorated `@torch.jit.script` or
        `@torch.jit.script_method` (pytorch-kaldi's `liGRU_layer.ligru_cell`), or a method of a
        class decorated `@torch.jit.script` (ASL's `DownsampleJIT`, compiled at import). An edit
        there must stay scriptable, and a device declaration (`torch.cuda.is_available()`) is not."""
        for ancestor in self.tree.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)) and any(
                self.tree.qualname(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
                in ("torch.jit.script", "torch.jit.script_method")
                for d in ancestor.decorators
            ):
                return True
        return False

    def undecided(self) -> list[cst.CSTNode]:
        """Where a value of unknown place meets one devfix knows (a model on the device and a
        batch a helper returned; a CPU tensor and a model a framework placed): the meetings it
        cannot judge, so edits none, in the program's own code of a file that places things.
        What the user should look at after a run."""
        if not self.uses_device:
            return []
        program = self.program
        found = []
        for meeting in program.meetings.values():
            if meeting.kind not in ("call", "op", "index"):
                continue
            function = self.tree.enclosing(meeting.node, cst.FunctionDef)
            info = program.functions.get(id(function)) if function is not None else None
            if info is not None and info.world != "program":
                continue  # a module's own methods run wherever its callers put it
            places = meeting.places()
            if Place.UNKNOWN in places and (Place.CPU in places or Place.DEVICE in places):
                found.append(meeting.node)
        return sorted(found, key=self.tree.order)

    def summary(self, path: str) -> ModuleSummary:
        """What this file tells the project files that import it (linking.py)."""
        summary = summarize(self.tree, self.program, path)
        for name, export in summary.names.items():
            if isinstance(export, ClassSummary) and export.moves_items_for:
                summary.names[name] = self._items_without_transfers(export)
        return summary

    def _items_without_transfers(self, export: ClassSummary) -> ClassSummary:
        """What the dataset's `__getitem__` returns once its transfers are gone, from the program
        evaluated once more without them; only items wholly on the host may leave (DEV006)."""
        klass = self.program.classes[id(export.node)]
        getitem = klass.methods.get("__getitem__")
        transfers = class_transfers(self.tree, self.program, klass)
        what_if = self._run(frozenset(id(t.call) for t in transfers))
        info = what_if.functions.get(id(getitem)) if getitem is not None else None
        item = exported(info.returns, collated=True) if info is not None and info.returns is not None else None
        if item is None or not on_host_only(item):
            return replace(export, moves_items_for="")
        return replace(export, unmoved_element=item)

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.tree.position(node)

    def value(self, node: cst.CSTNode) -> Value | None:
        return self.program.values.get(id(node))

    def code(self, node: cst.CSTNode, limit: int = 0) -> str:
        return self.tree.code(node, limit)

    def quote(self, text: str) -> str:
        return self.tree.quote(text)

    def torch_name(self) -> str:
        return self.devices.torch_name()

    def loader_plan_of(self, loader_key: int | None) -> LoaderPlan | None:
        return self.loader_plans.get(loader_key) if loader_key is not None else None


def _hoisted(loader_plans: dict[int, LoaderPlan]) -> frozenset[int]:
    return frozenset(t.key for p in loader_plans.values() for t in p.hoist)


def _block_everywhere(loader_plans: dict[int, LoaderPlan]) -> None:
    """A transfer that one loader over its dataset cannot do without stays for every loader
    over it: the others must not pin device data or move it twice."""
    blocked = {t.key for p in loader_plans.values() for t in p.blocked}
    for loader_plan in loader_plans.values():
        stay = [t for t in loader_plan.hoist if t.key in blocked]
        if stay:
            for transfer in stay:
                transfer.reason = transfer.reason or "another loader over the same dataset needs it"
            loader_plan.hoist = [t for t in loader_plan.hoist if t not in stay]
            loader_plan.blocked.extend(stay)


def _loops_move(program: Program, plan: Plan, loader_plan: LoaderPlan) -> bool:
    """Once the dataset stops placing its data, every loop over the loader gets the batches
    onto the device: the plan moves them (fixably), or the loop already did. A loop whose
    batches then meet nothing devfix knows the place of (a model a library loaded) proves
    nothing: the transfer stays where it is."""
    key = id(loader_plan.call)
    info = program.loaders.get(key)
    if info is not None and info.dataset.place is Place.DEVICE:
        return True  # the data stays on the device (moved once, in `__init__`): the transfer was a no-op
    if key not in program.loaders_iterated or key in program.loaders_escaped:
        return False
    planned = [move for move in plan.moves.values() if move.origin.kind == "batch" and move.origin.source == key]
    moved_in_loop = any(
        place is Place.DEVICE and any(o.kind == "batch" and o.source == key for o in receiver.origins)
        for _, receiver, place in program.tensor_moves
    )
    return (bool(planned) or moved_in_loop) and all(move.fixable for move in planned)


def _verdict(taken: bool) -> Value:
    """A loader's batches: on the CPU (its loops move them) or left on the device."""
    return Value(Kind.LOADER, Place.CPU if taken else Place.DEVICE)


def _of_unknown_kind(receiver: Value | None) -> bool:
    """A value the flow knows neither as a tensor nor as a module: an object handed to a
    function or a class (XLM's GLUE gets a `SentenceEmbedder`, a plain wrapper with a `cuda()`
    of its own)."""
    return receiver is None or receiver.kind not in (Kind.TENSOR, Kind.MODULE)

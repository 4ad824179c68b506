"""Does a line run on a machine without a GPU?

The flow evaluates a program as it runs on a GPU machine and records, for every condition,
its truth there and why: an availability check (`torch.cuda.is_available()`), a user's
choice (`args.cuda`, `--no-cuda`), or a constant (`USE_CUDA = True`). On a CPU-only machine
the first two flip (no GPU; a user without one does not ask for CUDA) and constants stay.
DEV002 and DEV001 ask this before calling a hard-coded CUDA a crash.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import libcst as cst

from devfix.analysis.conditions import has_items, is_periodic
from devfix.analysis.demands import chosen_cuda_index, cuda_move, gpu_measurements
from devfix.analysis.exits import (
    asked_under_earlier,
    catches_gpu_failures,
    collective,
    ends,
    exits,
    last_raise,
    line_of,
    returns,
)
from devfix.analysis.gpu_tests import cpu_truth, names_a_gpu_test, skips_without_gpu, tests_skipped_without_gpu
from devfix.analysis.program import Program
from devfix.analysis.scopes import dotted_name
from devfix.analysis.tree import Tree, is_main_check, reads_unbound_name


def always_true_guard(tree: Tree, program: Program, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The test of the nearest `if` around `node`, within its function, that is true on a
    CPU-only machine as well (`USE_CUDA = True`, `--gpu_mode` parsed with `type=bool`): a
    guard that only looks like one, worth naming when its code is reported."""
    child: cst.CSTNode = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(ancestor, cst.If) and child is ancestor.body:
            value = program.values.get(id(ancestor.test))
            if value is not None and value.cpu is True and value.flag != "available":
                return ancestor.test
        child = ancestor
    return None


def runs_without_gpu(
    tree: Tree, program: Program, node: cst.CSTNode, _memo: dict[int, bool] | None = None, *, caught: bool = True
) -> bool:
    """Whether `node` can run on a CPU-only machine (as far as the file shows). With `caught`
    (the default), a line whose failure the author catches (`try: ... except Exception:`)
    counts as one that does not: a CUDA call there crashes nothing."""
    memo = _memo if _memo is not None else {}
    if isinstance(node, cst.Call) and _reads_an_unbound_name(tree, node):
        return False  # `psp.PSPNet(...).cuda()` where nothing binds `psp`: NameError on every machine
    child: cst.CSTNode = node
    in_loop = False  # a `try` around a whole loop logs what ends a run; it is no CUDA fallback
    for ancestor in tree.ancestors(node):
        in_loop = in_loop or (isinstance(ancestor, (cst.For, cst.While)) and child is ancestor.body)
        if isinstance(ancestor, (cst.If, cst.IfExp, cst.While)) and child is not ancestor.test:
            truth = cpu_truth(program, ancestor.test)
            in_body = child is ancestor.body
            if (truth is False and in_body) or (truth is True and not in_body and not isinstance(ancestor, cst.While)):
                return False
        elif (
            caught
            and not in_loop
            and isinstance(ancestor, (cst.Try, cst.TryStar))
            and child is ancestor.body
            and catches_gpu_failures(ancestor)
        ):
            return False  # the author catches what fails without a GPU
        elif isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and _exits_before(tree, program, ancestor, child):
            return False  # `assert torch.cuda.is_available()`, `if not cuda: pytest.skip()` came first
        elif isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and _asks_after(tree, program, ancestor, child):
            return False  # a TensorRT engine's logger a few lines down: the block cannot finish anyway
        elif isinstance(ancestor, cst.SimpleStatementLine) and _asks_beside(tree, program, ancestor, node):
            return False  # `DDP(model.cuda(), device_ids=[torch.cuda.current_device()])`: the line fails anyway
        elif isinstance(ancestor, cst.IndentedBlock) and _reraised_after(tree, ancestor, child):
            return False  # `except Exception: img = torch.zeros(...).cuda(); raise`: the error goes on
        elif isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)) and tests_skipped_without_gpu(tree, program):
            return False  # `pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)`
        elif isinstance(ancestor, cst.FunctionDef):
            if needs_gpu(tree, program, ancestor):
                return False  # GPU code by design: it asks CUDA for a device index, a name, an event
            if names_a_gpu_test(ancestor.name.value):
                return False  # `def test_GPU(self):` beside its `test_CPU` twin: a GPU test by design
            return _function_runs(tree, program, ancestor, memo, caught)
        elif isinstance(ancestor, cst.ClassDef):
            if any(skips_without_gpu(program, decorator.decorator) for decorator in ancestor.decorators):
                return False
            if _used_only_on_a_gpu(tree, program, ancestor):
                return False  # every program of the run that builds it needs a GPU
            if _built_only_on_a_gpu(tree, program, ancestor, node):
                return False  # `__init__` calls `torch.cuda.set_device(self.gpus[0])`: no instance without one
            if _set_up_skips_without_gpu(tree, program, ancestor):
                return False  # `setUpClass` raises `unittest.SkipTest` without CUDA: no test of the class runs
        child = ancestor
    top = tree.top_statement(node)
    if isinstance(top, (cst.ClassDef, cst.FunctionDef)) and top.name.value in program.named_elsewhere:
        # a definition other files import: they do not run this file's `__main__` self-test
        return not needs_gpu_on_import(tree, program)
    if isinstance(top, cst.ClassDef) and _gpu_test_case(tree, program, top):
        return False
    return not needs_gpu(tree, program, tree.module)


def _reads_an_unbound_name(tree: Tree, call: cst.Call) -> bool:
    """The callee's chain (`psp.PSPNet(...).cuda`) starts at a name nothing binds; not in a
    comprehension or a lambda, whose own names the scopes do not hold. Asked of every
    candidate finding, so the chain is walked by hand and the scopes asked last."""
    scoped = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp, cst.Lambda)
    # the callee of a call the node is an argument of, too (`metwork.load_state_dict(torch.load(
    # f))`, a typo: its NameError comes first); or an argument reads one (`torch.load(path %
    # (opt.dataset_name, opt.epoch))` in a function whose options are `args`): never made
    read: list[cst.BaseExpression] = [
        root for outer in _calls_around(tree, call) if isinstance(root := _chain_root(outer.func), cst.Name)
    ]
    read += [arg.value for arg in call.args]  # read_names leaves out lambdas and comprehensions
    if not read or not reads_unbound_name(read, tree.scope_of(call), tree.data):
        return False
    return not any(isinstance(ancestor, scoped) for ancestor in tree.ancestors(call))


def _chain_root(node: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(node, (cst.Attribute, cst.Call, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node


def _calls_around(tree: Tree, call: cst.Call) -> list[cst.Call]:
    """`call`, and the calls of its statement that take it (or what holds it) as an argument."""
    found: list[cst.Call] = [call]
    child: cst.CSTNode = call
    for ancestor in tree.ancestors(call):
        if isinstance(ancestor, (cst.BaseStatement, cst.Lambda, cst.CompFor)):
            break
        if isinstance(ancestor, cst.Call) and child is not ancestor.func:
            found.append(ancestor)
        child = ancestor
    return found


def _is_test_case(klass: cst.ClassDef) -> bool:
    """The class derives from a `TestCase` (unittest's, or a framework's of that name)."""
    return any((dotted_name(base.value) or "").endswith("TestCase") for base in klass.bases)


def _set_up_skips_without_gpu(tree: Tree, program: Program, klass: cst.ClassDef) -> bool:
    """A test case whose `setUpClass` or `setUp` ends on a CPU-only machine (fast-transformers'
    GPU tests: `if not torch.cuda.is_available(): raise unittest.SkipTest(...)`): none of its
    tests runs there."""
    if not _is_test_case(klass):
        return False
    for statement in getattr(klass.body, "body", ()):
        if isinstance(statement, cst.FunctionDef) and statement.name.value in ("setUpClass", "setUp"):
            if _exits_before(tree, program, statement.body, statement):
                return True
    return False


def _gpu_test_case(tree: Tree, program: Program, klass: cst.ClassDef) -> bool:
    """A `unittest.TestCase` of a file whose `__main__` block stops without a GPU before it runs
    the tests (`assert torch.cuda.is_available(), 'NMS module requires CUDA support'` then
    `unittest.main()`): the tests of a CUDA kernel, GPU code by design."""
    if not _is_test_case(klass):
        return False
    for statement in tree.module.body:
        if isinstance(statement, cst.If) and is_main_check(statement.test):
            block = statement.body
            return bool(getattr(block, "body", ())) and _exits_before(tree, program, block, block.body[-1])
    return False


def needs_gpu_on_import(tree: Tree, program: Program, *, extensions: bool = True) -> bool:
    """`needs_gpu` of the module's code as an import runs it: without its `if __name__ ==
    "__main__":` blocks. Without `extensions`, only its own calls count, not a CUDA kernel it
    imports (the run's text scans follow those, `try: import alt_cuda_corr` / `except: pass`
    of RAFT's corr.py included, which needs no GPU)."""
    if extensions and program.imports_cuda_extension:
        return True
    index = _gpu_calls(tree, program)
    module = id(tree.module)
    if any(not tree.in_main_block(call) for call in index.direct.get(module, ())):
        return True
    return any(
        needs_gpu_when_called(tree, program, callee)
        for site, callee in index.sites.get(module, ())
        if not tree.in_main_block(site)
    )


_NEEDS_GPU: weakref.WeakKeyDictionary[Program, dict[tuple[str, int], bool]] = weakref.WeakKeyDictionary()
_GPU_CALLS: weakref.WeakKeyDictionary[Program, _GpuCalls] = weakref.WeakKeyDictionary()


@dataclass
class _GpuCalls:
    """Per scope (a function, or the module's own code), keyed by its node's id: the calls
    that ask for a GPU and run whenever the scope runs, and the calls of the file's functions
    that do. Built once per program, so that following calls stays linear."""

    direct: dict[int, list[cst.CSTNode]] = field(default_factory=dict)
    sites: dict[int, list[tuple[cst.CSTNode, cst.FunctionDef]]] = field(default_factory=dict)
    # the blocks (ids) with a statement that asks for a GPU whenever the block runs, whatever
    # the conditions around the block
    asking_blocks: set[int] = field(default_factory=set)
    asking_lines: set[int] = field(default_factory=set)  # those statement lines themselves
    asking_calls: dict[int, list[cst.CSTNode]] = field(default_factory=dict)  # per line, its asking calls
    # statement lines (ids) that call, unconditionally within the line, functions of the file
    site_lines: dict[int, list[cst.FunctionDef]] = field(default_factory=dict)


def _gpu_calls(tree: Tree, program: Program) -> _GpuCalls:
    index = _GPU_CALLS.get(program)
    if index is None:
        index = _GpuCalls()
        seen: set[int] = set()
        distributed = is_distributed(tree, program)
        chosen = (
            c
            for c in tree.data.calls
            if chosen_cuda_index(program.values, c)
            or (cuda_move(program.values, c) and (distributed or _in_a_cuda_method(tree, c)))
        )
        measured = gpu_measurements(program.values, tree.data.calls, lambda node: scope_owner(tree, node))
        for call in [*program.gpu_only_calls, *chosen, *measured]:
            owner = scope_owner(tree, call)
            if id(call) not in seen and _unconditional_in(tree, call, owner, program):
                index.direct.setdefault(id(owner), []).append(call)
            seen.add(id(call))
            line = line_of(tree, call) if not collective(program, call) else None
            if line is not None:
                index.asking_lines.add(id(line))
                index.asking_calls.setdefault(id(line), []).append(call)
                index.asking_blocks.add(id(tree.parent(line)))
        for owner, body in [
            (tree.module, tree.module.body),
            *((i.node, _statements(i.node)) for i in program.functions.values()),
        ]:
            refusals = [statement for statement in body if _refuses_cpu(tree, program, statement)]
            if refusals:
                index.direct.setdefault(id(owner), []).append(refusals[0])
        for info in program.functions.values():
            # a module's `__init__` runs where the module is built (`Model()` importing CUDA code)
            built = program.constructions.get(id(info.node), [])
            for site in {id(site): site for site in [*program.call_sites.get(id(info.node), []), *built]}.values():
                owner = scope_owner(tree, site)
                if owner is not info.node and _unconditional_in(tree, site, owner, program):
                    index.sites.setdefault(id(owner), []).append((site, info.node))
                line = line_of(tree, site) if owner is not info.node else None
                if line is not None:
                    index.site_lines.setdefault(id(line), []).append(info.node)
        _GPU_CALLS[program] = index
    return index


def _in_a_cuda_method(tree: Tree, call: cst.Call) -> bool:
    """`self.model.cuda()` inside a class's own `cuda()` method (CenterNet's `NetworkFactory`):
    DEV002 leaves it, as CUDA is that method's contract, so calling the method asks for a GPU."""
    function = tree.enclosing(call, cst.FunctionDef)
    return isinstance(function, cst.FunctionDef) and function.name.value == "cuda"


def _statements(function: cst.FunctionDef) -> tuple[cst.BaseStatement, ...]:
    body = function.body
    return tuple(body.body) if isinstance(body, cst.IndentedBlock) else ()


def _refuses_cpu(tree: Tree, program: Program, statement: cst.CSTNode) -> bool:
    """`if torch.cuda.is_available(): ... else: raise NotImplementedError("This code requires
    GPU")`, `if not args.cuda: sys.exit(...)`, `assert torch.cuda.is_available()`: without a GPU
    the run stops here, by design."""
    if isinstance(statement, cst.SimpleStatementLine):
        # `assert torch.cuda.is_available(), 'torch.cuda required for Relatedness'` (SentEval)
        return any(
            isinstance(small, cst.Assert) and cpu_truth(program, small.test) is False for small in statement.body
        )
    if not isinstance(statement, cst.If):
        return False
    truth = cpu_truth(program, statement.test)
    if truth is True:
        return _stops(tree, program, statement.body) or _refuses_within(tree, program, statement.body)
    if truth is False and isinstance(statement.orelse, cst.Else):
        return _stops(tree, program, statement.orelse.body) or _refuses_within(tree, program, statement.orelse.body)
    return False


def _refuses_within(tree: Tree, program: Program, body: cst.BaseSuite) -> bool:
    """A branch every run takes holds the refusal itself: `if args.cuda:` over an option that
    is always true (`type=bool`), then `if not torch.cuda.is_available(): raise ...` (DABNet)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else ()
    return any(_refuses_cpu(tree, program, statement) for statement in statements)


def _stops(tree: Tree, program: Program, body: cst.BaseSuite) -> bool:
    """The block raises or exits the program (a `return` is only a way around the GPU)."""
    return ends(tree, program, body) and not returns(body)


def scope_owner(tree: Tree, node: cst.CSTNode) -> cst.CSTNode:
    """The function whose body holds `node`, or the module."""
    return next((a for a in tree.ancestors(node) if isinstance(a, cst.FunctionDef)), tree.module)


def needs_gpu(tree: Tree, program: Program, owner: cst.CSTNode) -> bool:
    """The function (or the module's own code) asks CUDA, unconditionally, for something only a
    GPU has: `torch.cuda.current_device()`, `torch.cuda.Event(...)`, `.cuda(args.gpu)`, or
    calls, unconditionally, a function of its file that needs a GPU whenever it is called (a
    training step that converts every array with a `.cuda()` helper; functions of other files
    tell it through their summaries, summarize.py). It cannot run on a CPU-only machine
    whatever devfix does, so rewriting its `.cuda()` calls is churn."""
    cache = _NEEDS_GPU.setdefault(program, {})
    key = ("any", id(owner))
    if key not in cache:
        cache[key] = False  # a recursive call adds nothing while the answer is pending
        index = _gpu_calls(tree, program)
        cache[key] = (
            (owner is tree.module and program.imports_cuda_extension)
            or bool(index.direct.get(id(owner)))
            or any(needs_gpu_when_called(tree, program, callee) for _, callee in index.sites.get(id(owner), ()))
        )
    return cache[key]


def needs_gpu_when_called(tree: Tree, program: Program, function: cst.FunctionDef) -> bool:
    """`needs_gpu`, and what asks for the GPU comes before any `return` of the function:
    `init_distributed_mode(args)` returns early without a cluster, before its
    `torch.cuda.set_device(args.gpu)`, so a call of it needs no GPU. (A `raise` for bad input
    is no way around the GPU: the program fails either way.)"""
    cache = _NEEDS_GPU.setdefault(program, {})
    key = ("called", id(function))
    if key not in cache:
        cache[key] = False
        cache[key] = (needs_gpu(tree, program, function) and _asks_before_return(tree, program, function)) or (
            _asks_on_every_way_out(tree, program, function)
        )
    return cache[key]


def _asks_on_every_way_out(tree: Tree, program: Program, function: cst.FunctionDef) -> bool:
    """Every `return` of the function follows, in its own block, a line that asks for a GPU
    (or is one), and the function cannot end otherwise: no call of it comes back without the
    GPU. jukebox's `_setup_dist_from_mpi` retries NCCL in a loop whose `try` sets the CUDA
    device before it returns, then raises; `setup_dist_from_mpi` returns its result on one
    branch and sets the device itself on the other."""
    body = _statements(function)
    if not body or not _no_way_off_the_end(body[-1]):
        return False
    exits_found = [r for r in tree.data.within(tree.data.returns, function) if scope_owner(tree, r) is function]
    return bool(exits_found) and all(_asked_by(tree, program, exit_node) for exit_node in exits_found)


def _asked_by(tree: Tree, program: Program, exit_node: cst.CSTNode) -> bool:
    """The `return` is on, or follows in its block, a line that asks for a GPU."""
    line = tree.parent(exit_node)
    block = tree.parent(line) if isinstance(line, cst.SimpleStatementLine) else None
    if not isinstance(block, cst.IndentedBlock):
        return False
    index = _gpu_calls(tree, program)
    for statement in block.body[: block.body.index(line) + 1]:
        if id(statement) in index.asking_lines or any(
            needs_gpu_when_called(tree, program, callee) for callee in index.site_lines.get(id(statement), ())
        ):
            return True
    return False


def _no_way_off_the_end(statement: cst.BaseStatement) -> bool:
    """The statement returns or raises on every way through it: a last line that does, or an
    `if` whose every branch, `else` included, ends so."""
    if isinstance(statement, cst.SimpleStatementLine):
        return isinstance(statement.body[-1], (cst.Return, cst.Raise))
    if isinstance(statement, cst.If):
        body = statement.body.body if isinstance(statement.body, cst.IndentedBlock) else ()
        orelse = statement.orelse
        if not body or orelse is None or not _no_way_off_the_end(body[-1]):
            return False
        if isinstance(orelse, cst.If):
            return _no_way_off_the_end(orelse)
        rest = orelse.body.body if isinstance(orelse.body, cst.IndentedBlock) else ()
        return bool(rest) and _no_way_off_the_end(rest[-1])
    return False


def _asks_before_return(tree: Tree, program: Program, function: cst.FunctionDef) -> bool:
    exit_node = _first_exit(tree, function)

    def before_exit(node: cst.CSTNode) -> bool:
        return exit_node is None or tree.order(node) < tree.order(exit_node) or tree.is_inside(node, exit_node)

    index = _gpu_calls(tree, program)
    if any(before_exit(call) for call in index.direct.get(id(function), ())):
        return True
    return any(
        before_exit(site) and needs_gpu_when_called(tree, program, callee)
        for site, callee in index.sites.get(id(function), ())
    )


def _first_exit(tree: Tree, function: cst.FunctionDef) -> cst.CSTNode | None:
    """The function's first `return` (of its own scope), if any."""
    found: list[cst.Return] = []

    class Exits(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

    function.visit(Exits())
    return min(found, key=tree.order) if found else None


def is_distributed(tree: Tree, program: Program) -> bool:
    """The file calls `init_process_group`: one process per GPU by design. DEV002 leaves its
    `.cuda()` calls, so each stays a GPU demand, for this file and for the files that call its
    functions (tacotron2's `train.load_model`, called from its inference notebook)."""
    for call in tree.data.calls:
        callee = program.values.get(id(call.func))
        if callee is not None and (callee.qual or "").endswith("init_process_group"):
            return True
    return False


def _unconditional_in(tree: Tree, node: cst.CSTNode, owner: cst.CSTNode, program: Program) -> bool:
    """`node` runs whenever `owner` (a function, or the module) runs: no condition, `try` or
    nested scope between them (loops and `with` blocks run; so does `if __name__ == "__main__":`,
    and the body of a test that holds on a CPU-only machine, `if use_cuda:` after
    `use_cuda = True`)."""
    child = node
    for ancestor in tree.ancestors(node):
        if ancestor is owner:
            return True
        if (
            isinstance(ancestor, cst.If)
            and child is not ancestor.test
            and not is_main_check(ancestor.test)
            and not (child is ancestor.body and cpu_truth(program, ancestor.test) is True)
            and not (child is ancestor.body and is_periodic(ancestor.test) and _in_a_for_loop(tree, ancestor, owner))
            and not (child is ancestor.body and has_items(ancestor.test))
        ):
            return False
        first = getattr(ancestor, "test", None) or getattr(ancestor, "left", None)  # evaluated whatever follows
        if isinstance(ancestor, cst.While) and child is ancestor.body and _enters(program, ancestor):
            child = ancestor
            continue
        if (
            isinstance(
                ancestor,
                (
                    cst.IfExp,
                    cst.While,
                    cst.Try,
                    cst.TryStar,
                    cst.BooleanOperation,
                    cst.FunctionDef,
                    cst.Lambda,
                    cst.ClassDef,
                    cst.CompFor,
                ),
            )
            and child is not first
        ):
            return False
        child = ancestor
    return False


def _enters(program: Program, loop: cst.While) -> bool:
    """The loop's body runs, as a `for` loop's does: a training loop counted by hand (`while i <
    10000000:`, Humpback-Whale's, around its `data_parallel`), an episode loop (`while not
    done:`), `while True:`. Not a loop whose test is false on a CPU-only machine (`while
    torch.cuda.is_available() and ...`)."""
    return cpu_truth(program, loop.test) is not False


def _in_a_for_loop(tree: Tree, node: cst.CSTNode, owner: cst.CSTNode) -> bool:
    for ancestor in tree.ancestors(node):
        if ancestor is owner:
            return False
        if isinstance(ancestor, cst.For):
            return True
    return False


def gpu_only_call_ids(program: Program) -> set[int]:
    """The ids of the calls that ask for a GPU whatever they are given (`Program.gpu_only_calls`),
    for the rules and this module to test a call against."""
    return {id(call) for call in program.gpu_only_calls}


def _handed_only_to_gpu_calls(tree: Tree, program: Program, function: cst.FunctionDef) -> bool:
    """The function, called nowhere in the file, is handed as an argument only to calls that
    need a GPU: NVAE's `init_processes(0, size, main, args)`, which sets the CUDA device and
    starts an NCCL process group before it calls `main`."""
    handed = _handed_functions(tree, program).get(id(function), [])
    gpu_calls = gpu_only_call_ids(program)
    return bool(handed) and all(id(call) in gpu_calls or _calls_a_gpu_function(tree, program, call) for call in handed)


_HANDED: weakref.WeakKeyDictionary[Program, dict[int, list[cst.Call]]] = weakref.WeakKeyDictionary()


def _handed_functions(tree: Tree, program: Program) -> dict[int, list[cst.Call]]:
    """For each function of the file passed by name as an argument, the calls it is passed to:
    read once per program, so asking about every uncalled function stays linear."""
    found = _HANDED.get(program)
    if found is None:
        found = {}
        for call in tree.data.calls:
            for arg in call.args:
                value = program.values.get(id(arg.value)) if isinstance(arg.value, cst.Name) else None
                if value is not None and isinstance(value.ref, cst.FunctionDef):
                    found.setdefault(id(value.ref), []).append(call)
        _HANDED[program] = found
    return found


def _calls_a_gpu_function(tree: Tree, program: Program, call: cst.Call) -> bool:
    """`call` calls a function of this file that needs a GPU whenever it is called."""
    callee = program.values.get(id(call.func))
    ref = callee.ref if callee is not None else None
    return isinstance(ref, cst.FunctionDef) and needs_gpu_when_called(tree, program, ref)


def _function_runs(
    tree: Tree, program: Program, function: cst.FunctionDef, memo: dict[int, bool], caught: bool = True
) -> bool:
    """A function runs without a GPU when a call of it does, or (called nowhere in the file)
    when its definition does; a GPU-only test decorator says it does not."""
    key = id(function)
    if key in memo:
        return memo[key]  # also: a recursive call adds nothing while its answer is pending
    memo[key] = False
    if any(skips_without_gpu(program, decorator.decorator) for decorator in function.decorators):
        result = False  # `@pytest.mark.skipif(not torch.cuda.is_available(), ...)`
    elif never_runs(tree, program, function) or _used_only_on_a_gpu(tree, program, function):
        result = False
    else:
        info = program.functions.get(key)
        # a call of the function inside itself (`to_cuda(item)` over a list) runs only if another does
        own = [site for site in program.call_sites.get(key, []) if not tree.is_inside(site, function)]
        sites = own or (program.unreached_calls(info) if info is not None else [])
        if sites:
            result = any(
                runs_without_gpu(tree, program, site, memo, caught=caught)
                for site in sites
                if not _never_called(tree, site)
            )
        elif _handed_only_to_gpu_calls(tree, program, function):
            result = False  # `init_processes(0, size, main, args)`: it runs inside a call that needs a GPU
        else:
            result = runs_without_gpu(tree, program, function, memo, caught=caught)
    memo[key] = result
    return result


def _asks_beside(tree: Tree, program: Program, line: cst.SimpleStatementLine, node: cst.CSTNode) -> bool:
    """The statement line holding `node` asks for a GPU through another call that runs whenever
    the line does (mmpose's `MMDistributedDataParallel(model.cuda(), device_ids=
    [torch.cuda.current_device()])`): the line fails on a CPU-only machine whatever `node` does."""
    calls = _gpu_calls(tree, program).asking_calls.get(id(line), ())
    if not calls:
        return False
    around = {id(ancestor) for ancestor in tree.ancestors(node)}
    return any(call is not node and id(call) not in around and not _holds(tree, node, call) for call in calls)


def _holds(tree: Tree, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(ancestor is outer for ancestor in tree.ancestors(inner))


def _reraised_after(tree: Tree, block: cst.IndentedBlock, child: cst.CSTNode) -> bool:
    """`child` is a statement of an `except` block that ends by raising the error again (bare
    `raise`): on every machine the run goes on failing after it, so what `child` does on a
    CPU-only machine changes nothing (stable-dreamfusion's `load_img` fallback image)."""
    raised = last_raise(block)
    return (
        isinstance(tree.parent(block), cst.ExceptHandler)
        and raised is not None
        and raised.exc is None
        and child is not block.body[-1]
        and any(child is statement for statement in block.body)
    )


def never_runs(tree: Tree, program: Program, function: cst.FunctionDef) -> bool:
    """A top-level, undecorated function of a script, or a method of a top-level plain class
    there, that nothing in the run refers to (project.py): dead code, whose hard-coded CUDA
    crashes nobody and whose `torch.load` loads nothing."""
    if not all(_only_wraps(decorator.decorator) for decorator in function.decorators):
        return False  # `@app.route(...)`, `@register`: others may call it by what the decorator did
    key = _run_key(tree, function)
    return key is not None and key in program.unreferenced


def _run_key(tree: Tree, definition: cst.ClassDef | cst.FunctionDef) -> str | None:
    """How the run's text scans name a definition: `name` at the module's top, `Class.name`
    for a method of a top-level class; None elsewhere."""
    parent = tree.parent(definition)
    if parent is tree.module:
        return definition.name.value
    owner = tree.parent(parent) if isinstance(parent, cst.IndentedBlock) else None
    if isinstance(owner, cst.ClassDef) and tree.parent(owner) is tree.module:
        return f"{owner.name.value}.{definition.name.value}"
    return None


# Decorators that only wrap the function, never hand it to other code.
_WRAPPING_DECORATORS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.enable_grad", "no_grad", "inference_mode",
     "functools.lru_cache", "lru_cache", "functools.cache", "functools.wraps", "staticmethod", "classmethod"}
)  # fmt: skip


def _only_wraps(decorator: cst.BaseExpression) -> bool:
    """`@torch.no_grad()`, `@lru_cache(...)`: the function is still called only by its name."""
    name = dotted_name(decorator.func if isinstance(decorator, cst.Call) else decorator)
    return name in _WRAPPING_DECORATORS


def _used_only_on_a_gpu(tree: Tree, program: Program, definition: cst.ClassDef | cst.FunctionDef) -> bool:
    """A top-level class or function, or a method of a top-level class (`Class.method`), that
    only code needing a GPU builds or calls (users.py)."""
    key = _run_key(tree, definition)
    return key is not None and key in program.gpu_only_users


def _built_only_on_a_gpu(tree: Tree, program: Program, klass: cst.ClassDef, method: cst.CSTNode) -> bool:
    """`method` is a method of `klass` other than `__init__`, and `__init__` needs a GPU
    whenever it runs: an instance, and so a call of the method, exists only where there is a
    GPU. Static and class methods need no instance."""
    if not isinstance(method, cst.FunctionDef) or method.decorators or method.name.value == "__init__":
        return False
    if tree.parent(method) is not klass.body:
        return False
    init = next((s for s in klass.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    return init is not None and needs_gpu_when_called(tree, program, init)


def _never_called(tree: Tree, site: cst.CSTNode) -> bool:
    """`train(train_loader, ...)` where `train_loader` is bound nowhere: evaluating the
    arguments raises NameError, so the call never happens."""
    if not isinstance(site, cst.Call):
        return False
    return reads_unbound_name([arg.value for arg in site.args], tree.scope_of(site), tree.data)


def after_an_exit(tree: Tree, program: Program, node: cst.CSTNode) -> bool:
    """`node` follows, at the module's top, a statement that ends the process on every machine
    (`sys.exit()`; `os._exit(00)`, which a notebook runs to restart its runtime): in a script
    nothing after it runs, and in a notebook the cells after it run in a new session, without
    the names bound before it, which devfix's one program of the notebook does not model
    (ParallelWaveGAN's conversion notebook). An edit there is not one devfix can stand behind."""
    top = tree.top_statement(node)
    if top is None:
        return False
    first = _FIRST_EXIT.get(program)
    if first is None:
        body = tree.module.body
        first = _FIRST_EXIT[program] = next(
            (
                index
                for index, statement in enumerate(body)
                if isinstance(statement, cst.SimpleStatementLine)
                and any(exits(tree, program, s) for s in statement.body)
            ),
            len(body),
        )
    body = tree.module.body
    return first < len(body) and any(statement is top for statement in body[first + 1 :])


_FIRST_EXIT: weakref.WeakKeyDictionary[Program, int] = weakref.WeakKeyDictionary()


_EXITS: weakref.WeakKeyDictionary[Program, dict[int, tuple[dict[int, int], int]]] = weakref.WeakKeyDictionary()


def stops_before(tree: Tree, program: Program, node: cst.CSTNode) -> bool:
    """A statement before `node`, in its block or a block around it within its function, ends
    the run on a CPU-only machine (`if device == "cuda" and not torch.cuda.is_available():
    pytest.skip(...)`)."""
    child: cst.CSTNode = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)) and _exits_before(tree, program, ancestor, child):
            return True
        child = ancestor
    return False


def _exits_before(tree: Tree, program: Program, block: cst.CSTNode, child: cst.CSTNode) -> bool:
    """A statement before `child` in `block` ends the run on a CPU-only machine. The first
    such statement of each block is found once per program: asked for every finding of a
    module of a thousand functions, a scan of the statements above each would be quadratic."""
    per_block = _EXITS.setdefault(program, {})
    known = per_block.get(id(block))
    if known is None:
        statements = getattr(block, "body", ())
        positions = {id(statement): index for index, statement in enumerate(statements)}
        first = next(
            (index for index, statement in enumerate(statements) if _ends_the_run(tree, program, block, statement)),
            len(statements),
        )
        known = per_block[id(block)] = (positions, first)
    positions, first = known
    # a child that is not one of the block's statements comes after all of them
    return first < positions.get(id(child), len(positions))


_ASKS: weakref.WeakKeyDictionary[Program, dict[int, tuple[dict[int, int], list[bool]]]] = weakref.WeakKeyDictionary()


def _asks_after(tree: Tree, program: Program, block: cst.CSTNode, child: cst.CSTNode) -> bool:
    """A statement line after `child` in `block`, reached through plain statement lines only,
    asks for a GPU (ultralytics' TensorRT branch: `device = torch.device('cuda:0')`, then
    `trt.Logger(...)`): the block cannot finish on a CPU-only machine whatever `child` does,
    so rewriting `child` is churn. Worked out once per block, from its last statement up."""
    per_block = _ASKS.setdefault(program, {})
    known = per_block.get(id(block))
    if known is None:
        statements = list(getattr(block, "body", ()))
        asking = _gpu_calls(tree, program).asking_lines
        ahead = False
        flags = [False] * len(statements)
        for index in range(len(statements) - 1, -1, -1):
            flags[index] = ahead
            statement = statements[index]
            if not isinstance(statement, cst.SimpleStatementLine):
                ahead = False  # a branch or a loop may leave the block first
            elif id(statement) in asking:
                ahead = True
            elif any(isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for small in statement.body):
                ahead = False
        known = per_block[id(block)] = ({id(statement): index for index, statement in enumerate(statements)}, flags)
    positions, flags = known
    position = positions.get(id(child))
    return position is not None and flags[position]


def _ends_the_run(tree: Tree, program: Program, block: cst.CSTNode, statement: cst.CSTNode) -> bool:
    if (statement is program.first_failure and block is tree.module) or statement is program.main_failure:
        return True  # raises ImportError or NameError on every machine: nothing after it runs
    if isinstance(statement, cst.SimpleStatementLine):
        # `model, ... = restore_from(model, ...)`, whose `torch.cuda.current_device()` fails
        # without a GPU (SiamMask's training scripts): nothing after it runs there either
        index = _gpu_calls(tree, program)
        asks = id(statement) in index.asking_lines or any(
            needs_gpu_when_called(tree, program, callee) for callee in index.site_lines.get(id(statement), ())
        )
        return asks or any(
            (isinstance(small, cst.Assert) and cpu_truth(program, small.test) is False) or exits(tree, program, small)
            for small in statement.body
        )
    return (
        isinstance(statement, cst.If)
        and cpu_truth(program, statement.test) is True
        and ends(tree, program, statement.body)
    ) or _every_branch_asks_for_a_gpu(tree, program, block, statement)


def _every_branch_asks_for_a_gpu(tree: Tree, program: Program, block: cst.CSTNode, statement: cst.CSTNode) -> bool:
    """`if distributed: model = DDP(model.to(device), ...) else: model = nn.DataParallel(model,
    device_ids=gpus).cuda()` (HRNet's train.py): each way through the statement asks for a GPU,
    in its own block or, for `if distributed:`, in an earlier `if distributed:` of the same
    block (`torch.cuda.set_device(device)`): nothing after it runs on a CPU-only machine."""
    if not isinstance(statement, cst.If) or statement.orelse is None:
        return False
    asking = _gpu_calls(tree, program).asking_blocks
    branch: cst.If = statement
    while True:
        if id(branch.body) not in asking and not asked_under_earlier(block, statement, branch.test, asking):
            return False
        orelse = branch.orelse
        if orelse is None:
            return False
        if isinstance(orelse, cst.Else):
            return id(orelse.body) in asking
        branch = orelse

"""The per-file pipeline: bytes -> parse once -> analysis -> rules -> edits -> checked bytes.

Nothing here is rule-specific. One analysis of the original file, every enabled rule reads
it, and all fixes are applied in one transformation: a finding is identified by its code and
its position in the original file, so `check` and `apply --diff` report the same findings at
the same places, and the fixed file is checked to parse before anything is returned. A fix
that needs a device variable carries its declaration request; the declarations of the fixes
applied are inserted once per scope (DEV001), whichever rule asked first.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TypeVar, cast

import libcst as cst

from devfix import parallel, parsing, suppressions
from devfix.analysis import users
from devfix.analysis.devices import DeclarationRequest
from devfix.analysis.facts import FileFacts
from devfix.analysis.layout import Original
from devfix.analysis.linking import ModuleSummary, fingerprint, join_incoming
from devfix.analysis.project import ProjectFacts
from devfix.analysis.reach import needs_gpu_on_import
from devfix.analysis.tree import imports_module
from devfix.analysis.values import Value
from devfix.config import Config
from devfix.edits import Edit, InsertAfter, InsertBefore, Replace, apply_edits
from devfix.gpu_only import gpu_only_users, used_only_by_broken_files
from devfix.parsing import TOO_DEEP, code_that_parses
from devfix.results import Diagnostic, FileResult, FixEdit, one_line
from devfix.rules import BY_CODE, Finding, Rule, RuleContext, enabled_rules, lookup
from devfix.rules.dev001_device_declaration import DeviceDeclaration

if TYPE_CHECKING:
    from devfix.cache import Cache

# Analyses of a group's files with what their callers pass: a chain of calls across files (a
# script builds a `Trainer(args)`, which hands `self.args` to a helper) needs one round a hop.
_CALLER_ROUNDS = 3
_GPU_ONLY_ROUNDS = 3
_F = TypeVar("_F", bound=Callable[..., Any])


class RuleCrash(Exception):
    def __init__(self, rule: type[Rule], error: BaseException) -> None:
        super().__init__(
            f"internal error in rule {rule.code} {rule.name}: {type(error).__name__}: {one_line(error)}; file left unchanged"
        )
        self.rule = rule
        self.tb = traceback.format_exc()


@dataclass(frozen=True)
class Parsed:
    """A file's parse, kept for its second analysis: the bytes it was made from (the same
    object), the module, and whether CPython's parser read them too."""

    source: bytes
    module: cst.Module
    original: Original | None


# A file's analysis kept between the GPU-only rounds of process_programs, with the bytes it was
# made from: a round changes only which of its names only GPU-only code uses, which no part
# of the flow reads (only reach.py's questions do), so each later round asks its calls again
# (users.calls) and the last one runs the rules on it, instead of parsing and evaluating the
# file once per round (a third of transferlearning's project run went there).
Analyses = dict[str, tuple[bytes, FileFacts, Original | None]]
# At most this many are kept at once: memory stays flat in the number of files (a file beyond
# it is analysed again each round, as before).
_KEPT_ANALYSES = 128


def process_source(
    source: bytes,
    config: Config,
    *,
    fix: bool,
    path: str = "<string>",
    project: ProjectFacts | None = None,
    incoming: dict[str, dict[str, Value]] | None = None,
    parsed: dict[str, Parsed] | None = None,
    uses_only: bool = False,
    analyses: Analyses | None = None,
) -> FileResult:
    """Check (and with `fix`, rewrite) one file's bytes. Never raises for bad input.

    `parsed` keeps the file's parse for a second analysis of the same bytes (its callers'
    arguments, analyse_group): a LibCST module is immutable, and parsing is a third of the cost.
    `uses_only` stops once the file's calls of the run's code are known (`result.uses`, for
    the GPU-only rounds of process_programs): no rule runs, nothing is reported. `analyses`
    keeps the analysis of a `uses_only` call for the next call on the same bytes.

    Whatever goes wrong (a parse error, a rule or analysis bug, a fix that does not parse)
    becomes `result.error`, with `result.new` equal to the original bytes: the file is left
    exactly as it was and the run goes on with the next one.
    """
    project = project or ProjectFacts()  # a fresh one per call: it fills as files are analysed
    result = FileResult(path, source, source)
    try:
        with warnings.catch_warnings():
            # The user's invalid escapes and the like (seen by `ast` and by string evaluation
            # in the analysis) are not devfix's to print.
            warnings.simplefilter("ignore")
            _process(source, config, fix, result, project, incoming, parsed, uses_only, analyses)
    except RuleCrash as crash:
        result.fail(str(crash), crash.tb)
    except _Unparseable as error:
        result.fail(str(error) or result.error, None)
    except RecursionError:
        result.fail(TOO_DEEP, traceback.format_exc())
    except Exception as error:  # noqa: BLE001 - last line of defence: one file never stops the run
        result.fail(
            f"internal error: {type(error).__name__}: {one_line(error)}; file left unchanged",
            traceback.format_exc(),
        )
    return result


def _fewer_collections(function: _F) -> _F:
    """Python's cycle collector, run less often while `function` runs: it walks every object
    alive, and a run keeps many (the summaries of a group's files, the trees of a project's),
    so its default pace cost a tenth of a project run's time (transferlearning: 9.4 s of CPU
    against 8.3 s). Memory stays as flat: what a file's analysis leaves is freed by reference
    counts."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        before = gc.get_threshold()
        gc.set_threshold(10_000, 20, 20)
        try:
            return function(*args, **kwargs)
        finally:
            gc.set_threshold(*before)

    return cast(_F, run)


@_fewer_collections
def process_programs(
    reads: Sequence[FileResult],
    configs: Sequence[Config],
    *,
    fix: bool,
    progress: Callable[[], None] = lambda: None,
    jobs: int = 1,
    cache: Cache | None = None,
    run_key: str = "",
    scans: parallel.TextScans | None = None,
) -> list[FileResult]:
    """runner.process_project over Python programs (a notebook already joined into one),
    once the run's cache (`run_key`) has no result for the whole run; `scans`, the run's
    text scans if the runner began them.

    The files fall into groups linked by imports (project.groups): a file's analysis reads the
    summaries of the files it imports, and the callers' facts of the files that call it, all
    in its own group, so each group is analysed apart, in its own order, with a project state
    of its own (`analyse_group`), in this process or in a worker (`jobs`); what the groups
    learnt is then joined here for the last step, which looks at the whole run."""
    files = [(read.path, read.old) for read in reads]
    project = (scans or parallel.TextScans(files, jobs)).facts()
    results: list[FileResult] = list(reads)
    work = []
    for group in project.groups(files):
        if any(_may_matter(reads[index], project) for index in group):
            work.append(group)
        else:
            for _ in group:
                progress()  # nothing in it for a rule: no file of the group is parsed
    keys: dict[tuple[int, ...], str] = {}
    partial: list[list[int]] = []  # groups analysed without their summaries here (cache, workers)
    if cache is not None:
        todo = []
        for group in work:
            key = keys[tuple(group)] = cache.key(group, reads, configs, fix, project)
            hit = cache.get(group, reads, key)
            if hit is None:
                todo.append(group)
                continue
            partial.append(group)
            for _ in group:
                progress()
            for index, result in hit.items():
                results[index] = result
        work = todo
    incoming: dict[str, dict[str, dict[str, Value]]] = {}
    kept: dict[str, Parsed] = {}  # parses the last step may read again

    def join(group: Sequence[int], done: GroupResult) -> None:
        for index, result in done.results.items():
            results[index] = result
        project.summaries.update(done.summaries)
        project.missing.update(done.missing)
        project.unparseable.update(done.unparseable)
        project.gpu_on_import.update(done.gpu_on_import)
        incoming.update(done.incoming)
        kept.update(done.parses)

    for group, done in parallel.analyse_groups(work, reads, configs, fix, project, jobs):
        for _ in group:
            progress()
        join(group, done)
        if not done.complete:
            partial.append(group)
        if cache is not None:
            cache.put(group, reads, keys[tuple(group)], done.results)
    # Classes and functions that only GPU-only code builds or calls: their files once more,
    # knowing that (`class Seq2Seq` used only after `assert torch.cuda.is_available()`); and
    # again while that makes more of them so (a model built only by such a class's
    # `__init__`), a few rounds at most.
    mentions: dict[int, users.Mentions | None] = {}  # each file's mentions, read once (users.py)
    grown = gpu_only_users(reads, results, mentions, project)
    for path, names in used_only_by_broken_files(reads, results, project).items():
        grown[path] = grown.get(path, frozenset()) | names
    again: set[int] = set()  # files analysed again for their uses only
    analyses: Analyses = {}  # their analyses, for the next round and the last step
    for _ in range(_GPU_ONLY_ROUNDS):
        changed = {path for path, names in grown.items() if not names <= project.gpu_only.get(path, frozenset())}
        if not changed:
            break
        for path, names in grown.items():
            project.gpu_only[path] = project.gpu_only.get(path, frozenset()) | names
        for group in partial:
            # the cache and the workers give back no summaries: a group analysed once more needs its own first
            if any(reads[index].path in changed and results[index] is not reads[index] for index in group):
                join(group, analyse_group(group, reads, configs, fix, project))
        partial = []
        for index, read in enumerate(reads):
            if read.path in changed and results[index] is not read and results[index].error is None:
                # what a round needs is the file's uses: the rules run once, when the rounds are done
                results[index] = _again(
                    index, reads, configs, fix, project, incoming, kept, uses_only=True, analyses=analyses
                )
                again.add(index)
        grown = gpu_only_users(reads, results, mentions, project)
    # The last analysis of each file the rounds analysed again, with what they settled on: only
    # its own GPU-only names, which changed in its last round only, and the run's summaries and
    # callers' facts, fixed since the first round, are read.
    for index in sorted(again):
        results[index] = _again(index, reads, configs, fix, project, incoming, kept, analyses=analyses)
    if cache is not None and run_key:
        cache.put_run(
            reads, run_key, {index: result for index, result in enumerate(results) if result is not reads[index]}
        )
        cache.save()
    return results


@dataclass
class GroupResult:
    """What the analysis of one group of files gives back: its results by index, and the
    project state it built (the summaries of its first pass, the imports it found missing,
    its files no parser reads)."""

    results: dict[int, FileResult] = field(default_factory=dict)
    summaries: dict[str, ModuleSummary] = field(default_factory=dict)
    missing: dict[str, frozenset[str]] = field(default_factory=dict)
    unparseable: set[str] = field(default_factory=set)
    gpu_on_import: set[str] = field(default_factory=set)
    incoming: dict[str, dict[str, dict[str, Value]]] = field(default_factory=dict)  # what its first pass's calls pass
    complete: bool = True  # False: without the summaries and the calls (from a worker, parallel.py)
    # the parses of its files other files name, for the last step's analyses (in this process only)
    parses: dict[str, Parsed] = field(default_factory=dict)

    def trimmed(self) -> GroupResult:
        """Lean, unless a call in the group runs only on a GPU (users.py): the run's last step
        may then analyse the group's files once more, and reads these summaries and parses,
        which would otherwise be built again."""
        if any(not runs for result in self.results.values() for _, _, runs in result.uses):
            return self
        return self.lean()

    def lean(self) -> GroupResult:
        """Without what only the run's last step may need (summaries, callers' facts): LibCST
        trees inside them cost more to send between processes than to build again."""
        results = {
            index: dataclasses.replace(result, summary=None, linked_calls=[]) for index, result in self.results.items()
        }
        return GroupResult(
            results,
            missing=self.missing,
            unparseable=self.unparseable,
            gpu_on_import=self.gpu_on_import,
            complete=False,
        )


def _again(
    index: int,
    reads: Sequence[FileResult],
    configs: Sequence[Config],
    fix: bool,
    project: ProjectFacts,
    incoming: dict[str, dict[str, dict[str, Value]]],
    parsed: dict[str, Parsed],
    *,
    uses_only: bool = False,
    analyses: Analyses | None = None,
) -> FileResult:
    """A file's analysis once more, with what its callers pass and its parse (or its whole
    analysis, from an earlier GPU-only round) if kept."""
    read = reads[index]
    return process_source(
        read.old,
        configs[index],
        fix=fix,
        path=read.path,
        project=project,
        incoming=incoming.get(read.path),
        parsed=parsed,
        uses_only=uses_only,
        analyses=analyses,
    )


def analyse_group(
    group: Sequence[int], reads: Sequence[FileResult], configs: Sequence[Config], fix: bool, project: ProjectFacts
) -> GroupResult:
    """The first two steps of process_programs for one group of files, in analysis order.

    The group starts from the run's text scans with no summary of any other group, whatever
    ran before it, so its results do not depend on where or after what it runs."""
    own = dataclasses.replace(project, summaries={}, missing={}, unparseable=set(), gpu_on_import=set())
    done = GroupResult()
    # the parses of the files other files name, whose functions their callers may feed: kept
    # for the second analysis below, and dropped with the group
    parsed: dict[str, Parsed] = {}
    for index in group:
        read = reads[index]
        if not _may_matter(read, own):
            continue
        keep = parsed if read.path in project.named_by else None
        result = process_source(read.old, configs[index], fix=fix, path=read.path, project=own, parsed=keep)
        if result.summary is not None:
            own.summaries[result.path] = result.summary
        done.results[index] = result
    done.summaries = dict(own.summaries)
    # Functions called from files analysed after them: once more, with what their callers pass
    # (`train(model, loader, device)` defined in engine.py, called from main.py); and again
    # while that changes what a file passes on (`Trainer(args)` hands `self.args` to a helper
    # of a third file), a few rounds at most.
    used: dict[str, tuple[object, ...]] = {}
    incoming: dict[str, dict[str, dict[str, Value]]] = {}
    for _ in range(_CALLER_ROUNDS):
        incoming = join_incoming(call for result in done.results.values() for call in result.linked_calls)
        changed = {
            index: facts
            for index in group
            if index in done.results
            and done.results[index].error is None
            and (facts := fingerprint(incoming.get(reads[index].path))) != used.get(reads[index].path, ())
        }
        for index, facts in changed.items():
            used[reads[index].path] = facts
            done.results[index] = _again(index, reads, configs, fix, own, incoming, parsed)
        if not changed:
            break
    done.missing, done.unparseable, done.incoming = own.missing, own.unparseable, incoming
    done.gpu_on_import = own.gpu_on_import
    done.parses = parsed
    return done


def _may_matter(read: FileResult, project: ProjectFacts) -> bool:
    """The pre-filter, a text scan before any parse: every rule needs torch, a tensor's own
    `.cuda()` method, or a project file that does (a package's `__init__.py` that re-exports
    its modules, a helper that imports an analysed file). Files failing it are never parsed."""
    if read.error:
        return False
    return (
        b"torch" in read.old
        or b".cuda(" in read.old
        or _reexports(read)
        or project.imports_analysed(read.path, read.old)
        or _configures_gpus(read, project)
    )


def _configures_gpus(read: FileResult, project: ProjectFacts) -> bool:
    """A configuration module of a project that names the GPU (`"gpu_train": True`,
    `USE_CUDA = True`): its importers read the switch from its summary."""
    several = project.index is not None and project.index.several
    return several and any(word in read.old for word in (b"cuda", b"gpu", b"CUDA", b"GPU"))


def _scriptable(facts: FileFacts, finding: Finding) -> Finding:
    """A fix inside code TorchScript compiles is reported without its edit: TorchScript refuses
    the device declaration a fix needs (`torch.cuda.is_available()`), so the layer could no
    longer be built on any machine (pytorch-kaldi's `@torch.jit.script_method` cells)."""
    if not finding.fixable or not facts.in_torchscript(finding.node):
        return finding
    hint = "inside TorchScript code: pass the device in (a tensor argument's `.device`), by hand"
    return dataclasses.replace(finding, edits=(), requests=(), hint=hint)


def _fails_on_import(facts: FileFacts, project: ProjectFacts, result: FileResult) -> bool:
    """The file's top-level code imports a project module that cannot be imported itself
    (Python 2 syntax, maybe three files down): importing the file raises SyntaxError too. A
    module merely missing from the checkout is not carried on: it may be a git submodule the
    user clones (SPADE's sync_batchnorm), and its importers' importers are left to run."""
    failure = facts.program.first_failure
    if not isinstance(failure, cst.SimpleStatementLine) or project.index is None:
        return False
    broken = project.index.imports_of(result.path, result.old, project.unparseable)
    return bool(broken) and any(imports_module(small, broken) for small in failure.body)


def _reexports(read: FileResult) -> bool:
    """A package's `__init__.py` that imports from its modules: its importers need its summary."""
    return read.path.endswith("__init__.py") and b"from ." in read.old


def _process(
    source: bytes,
    config: Config,
    fix: bool,
    result: FileResult,
    project: ProjectFacts,
    incoming: dict[str, dict[str, Value]] | None,
    parsed: dict[str, Parsed] | None = None,
    uses_only: bool = False,
    analyses: Analyses | None = None,
) -> None:
    analysed = analyses.pop(result.path, None) if analyses is not None else None
    kept = parsed.get(result.path) if parsed is not None else None
    facts: FileFacts | None = None
    if analysed is not None and analysed[0] is source:
        _, facts, original = analysed
        module = facts.module
    elif kept is not None and kept.source is source:
        module, original = kept.module, kept.original
    else:
        try:
            module, original = parsing.parse(source)
        except parsing.ParseFailure as failure:
            result.error = str(failure)
            if failure.python_error:
                project.unparseable.add(result.path)  # neither parser reads it: importing it fails too
            return
        if parsed is not None:
            parsed[result.path] = Parsed(source, module, original)
    silenced = suppressions.read(source)
    if silenced.skip_file:
        return  # `# devfix: skip-file`
    rules = [rule() for rule in enabled_rules(config.select, config.extend_select, config.ignore)]
    facts = _run(
        module,
        rules,
        config,
        fix,
        result,
        project,
        silenced,
        incoming,
        original=original,
        uses_only=uses_only,
        facts=facts,
    )
    if uses_only and analyses is not None and len(analyses) < _KEPT_ANALYSES:
        analyses[result.path] = (source, facts, original)


def _run(
    module: cst.Module,
    rules: Sequence[Rule],
    config: Config,
    fix: bool,
    result: FileResult,
    project: ProjectFacts,
    silenced: suppressions.Suppressions,
    incoming: dict[str, dict[str, Value]] | None = None,
    *,
    original: Original | None = None,
    uses_only: bool = False,
    facts: FileFacts | None = None,
) -> FileFacts:
    """One analysis, every rule, one application of the fixes (with `fix`, into `result.new`).
    `original`: where CPython's parser read the file (which it must then read fixed too), its
    bytes and statements' lines. `facts`: the file's analysis from an earlier GPU-only round,
    told the names only GPU-only code uses now. Returns the analysis."""
    if facts is not None:
        facts.learn_gpu_only_users(project.gpu_only.get(result.path, frozenset()))
    else:
        facts = _analyse(module, config, rules, result, project, incoming, original)
    if project.index is not None and project.index.several:
        if _fails_on_import(facts, project, result):
            project.unparseable.add(result.path)  # its importers fail at their import of it, in turn
        if needs_gpu_on_import(facts.tree, facts.program, extensions=False):
            project.gpu_on_import.add(result.path)  # its importers need a GPU at their import of it
        result.summary = facts.summary(result.path)
        result.linked_calls = [*facts.program.linked_calls, *facts.loader_verdicts]
        result.uses = users.calls(facts.tree, facts.program)
    if not uses_only and facts.uses_torch:
        _report(module, rules, config, fix, result, silenced, facts, original)
    return facts


def _analyse(
    module: cst.Module,
    config: Config,
    rules: Sequence[Rule],
    result: FileResult,
    project: ProjectFacts,
    incoming: dict[str, dict[str, Value]] | None,
    original: Original | None,
) -> FileFacts:
    """The file's analysis, told what the run knows of it (ProjectFacts.view)."""
    return FileFacts(
        module,
        device_style=config.device_style,
        dataset_placement=config.dataset_placement,
        allow_device_declarations=declarations_allowed(config),
        assume_discarded_assigned=any(r.code == "DEV011" for r in rules),
        gpus_chosen_elsewhere=project.queries_cuda_too_early_at_import(result.path),
        gpu_choice_functions=project.gpu_choice_functions,
        linker=project.linker(result.path),
        incoming=incoming,
        path=result.path,
        view=project.view(result.path, result.old),
        original=original,
    )


def _report(
    module: cst.Module,
    rules: Sequence[Rule],
    config: Config,
    fix: bool,
    result: FileResult,
    silenced: suppressions.Suppressions,
    facts: FileFacts,
    original: Original | None,
) -> None:
    """Every rule on the file's analysis, and (with `fix`) their fixes applied."""
    ctx = RuleContext(facts, config, module)
    everything = [
        _scriptable(facts, f) for f in _unique(facts, _run_rules(ctx, rules)) if not facts.in_dead_code(f.node)
    ]
    findings = [f for f in everything if not silenced.silences(facts.position(f.node)[0], f.rule.code)]
    wanted = [f for f in findings if f.fixable and (f.rule.safety == "safe" or config.unsafe_fixes)]
    # a fix whose device declaration is silenced (`# devfix: ignore[DEV001]`) is not applied
    undeclared = [f for f in wanted if any(silenced.silences(facts.position(r.node)[0], "DEV001") for r in f.requests)]
    wanted = [f for f in wanted if f not in undeclared]
    if silenced.by_line:
        used = {(facts.position(f.node)[0], f.rule.code) for f in everything if f not in findings}
        used |= {(facts.position(r.node)[0], "DEV001") for f in undeclared for r in f.requests}
        enabled = {rule.code for rule in rules} | ({"DEV001"} if declarations_allowed(config) else set())
        default = {rule.code for rule in BY_CODE.values() if rule.enabled_by_default}
        result.suppression_notes = suppressions.audit(silenced, used, BY_CODE.keys(), enabled, default <= enabled)
    declarations = _declarations(ctx, wanted)
    new_bytes, fixed, dropped, spliced = _apply_checked(module, facts, wanted + declarations, original is not None)
    for finding in [*findings, *declarations]:
        if finding in dropped:
            status, hint = (
                "no-fix",
                "internal error: this fix produced code that does not parse and was dropped; please report it",
            )
        elif finding in fixed:
            status, hint = ("fixed" if fix else "fixable"), finding.hint
        elif finding in undeclared:
            status, hint = "no-fix", "its fix needs the device declaration that `# devfix: ignore[DEV001]` silences"
        else:
            status, hint = _status(finding, config), finding.hint
        line, column = facts.position(finding.node)
        end_line, end_column = _end(module, finding.node, line, column)
        edits = tuple(_fix_edit(facts, module, edit) for edit in finding.edits) if status != "no-fix" else ()
        result.diagnostics.append(
            Diagnostic(
                line,
                column,
                finding.rule.code,
                finding.rule.name,
                finding.message,
                status,
                hint,
                end_line=end_line,
                end_column=end_column,
                edits=edits,
            )
        )
    result.diagnostics.sort(key=lambda d: (d.line, d.column, d.code))
    reported = {(d.line, d.column) for d in result.diagnostics}
    result.undecided = [
        (*facts.position(node), facts.code(node, 60))
        for node in facts.undecided()
        if facts.position(node) not in reported
    ]
    if fix and fixed:
        # a spliced file's unedited statements are its own bytes: nothing to reproduce
        regenerated = result.old if spliced else facts.tree.module_bytes()
        if regenerated != result.old:
            tail = _lost_blank_tail(result.old, regenerated)
            if tail is None:
                # LibCST cannot reproduce some files byte for byte (e.g. old Mac `\r` line
                # endings lose the final newline): writing them back would corrupt them.
                # Checked only before a write, since nothing else can harm.
                result.diagnostics = []
                result.error = "skipped: the parser cannot reproduce this file byte for byte (unusual line endings?)"
                return
            new_bytes = new_bytes.rstrip(_BLANK) + tail
        result.new = new_bytes


_BLANK = b" \t\n"


def _lost_blank_tail(old: bytes, regenerated: bytes) -> bytes | None:
    """The file's own run of blank lines at its end, where that is all LibCST failed to
    reproduce (indented blank lines after the last statement shrink: SincNet's
    compute_d_vector.py); None where anything else differs. No fix writes there."""
    if b"\r" in old or old.rstrip(_BLANK) != regenerated.rstrip(_BLANK):
        return None
    return old[len(old.rstrip(_BLANK)) :]


def _source(module: cst.Module, node: cst.CSTNode) -> str:
    """The node's code as it stands in the file: without the comment lines above a statement
    and without a statement's final newline."""
    if getattr(node, "leading_lines", None):
        node = node.with_changes(leading_lines=())
    return module.code_for_node(node).rstrip("\r\n")


def _end(module: cst.Module, node: cst.CSTNode, line: int, column: int) -> tuple[int, int]:
    """1-based end line and column (exclusive) of `node`, from its start and its code."""
    lines = _source(module, node).split("\n")
    if len(lines) == 1:
        return line, column + len(lines[0])
    return line + len(lines) - 1, len(lines[-1]) + 1


def _fix_edit(facts: FileFacts, module: cst.Module, edit: Edit) -> FixEdit:
    node = edit.node
    line, column = facts.position(node)
    end_line, end_column = _end(module, node, line, column)
    if isinstance(edit, Replace):
        kind, content = "replace", cst.Module([]).code_for_node(edit.new)
    else:
        kind = {InsertBefore: "insert-before", InsertAfter: "insert-after"}.get(type(edit), "replace-statement")
        statements = getattr(edit, "statements", ())
        content = "".join(cst.Module([]).code_for_node(statement) for statement in statements)
    return FixEdit(kind, line, column, end_line, end_column, content)


def declarations_allowed(config: Config) -> bool:
    """A fix brings the device declaration it needs (DEV001's) whatever rules are selected, so
    `apply --select DEV002` fixes DEV002 alone, rule by rule, as a migration PR does. Only an
    explicit `ignore` of DEV001 turns declarations off: the fixes that need one are then
    reported without a fix, as under `# devfix: ignore[DEV001]`."""
    try:
        ignored = {rule.code for selector in config.ignore for rule in lookup(selector)}
    except KeyError:
        return True  # an unknown selector is the command line's error to report
    return "DEV001" not in ignored


def _unique(facts: FileFacts, findings: list[Finding]) -> list[Finding]:
    """One finding per rule and original node, the first a rule reported: two nodes may start at
    one position (`torch.cuda.FloatTensor(x).cuda()`: the call and the type), each its own."""
    seen: set[tuple[str, int, int, int]] = set()
    kept = []
    for finding in findings:
        key = (finding.rule.code, *facts.position(finding.node), len(facts.code(finding.node, 10_000)))
        if key in seen:
            continue
        seen.add(key)
        kept.append(finding)
    return kept


def _declarations(ctx: RuleContext, findings: Sequence[Finding]) -> list[Finding]:
    """DEV001's declaration for each device variable the fixes need, once per scope."""
    requests: dict[int, DeclarationRequest] = {}
    users: dict[int, list[str]] = {}
    for finding in findings:
        for request in finding.requests:
            requests.setdefault(id(request), request)
            users.setdefault(id(request), []).append(finding.rule.code)
    if not requests:
        return []
    _share_the_module_declaration(ctx, requests, users)
    rule = DeviceDeclaration()
    return [rule.declare(ctx, request, users[key]) for key, request in requests.items()]


def _share_the_module_declaration(
    ctx: RuleContext, requests: dict[int, DeclarationRequest], users: dict[int, list[str]]
) -> None:
    """One device name per scope, reused (spec principle 6): a function defined after the
    module's own declaration reads that one (it has run before the function can be called)
    instead of declaring the same device again at its top."""
    tree = ctx.facts.tree
    module = next((r for r in requests.values() if r.scope.kind == "module"), None)
    if module is None:
        return
    for key, request in list(requests.items()):
        if request is module or request.scope.kind != "function" or request.code != module.code:
            continue
        function = request.scope.function
        # after the declaration in preorder: its `def` runs, and so every call of it, after
        # the module's declaration has run (unless the declaration follows a statement that holds it)
        if (
            function is None
            or tree.order(function) <= tree.order(module.anchor)
            or (not module.before and tree.is_inside(function, module.anchor))
        ):
            continue
        del requests[key]
        users[id(module)].extend(users.pop(key))


def _apply_checked(
    module: cst.Module, facts: FileFacts, findings: list[Finding], cpython: bool = False
) -> tuple[bytes, list[Finding], list[Finding], bool]:
    """Apply `findings`; if the result does not parse, drop the fixes that break it alone.

    Returns the new file's bytes (empty when nothing is fixed), the findings fixed, the
    findings dropped for producing code that does not parse (reported as internal errors,
    never written), and whether the bytes were spliced into the original text.
    """
    dropped: list[Finding] = []
    keep = list(findings)
    # a fix that lost a conflict may apply in the next round: each drops those that break alone
    for _ in range(len(findings) + 1):
        new_module, fixed = _apply(module, facts, keep)
        if not fixed:
            return b"", fixed, dropped, False
        code, spliced = _fixed_code(facts, new_module, cpython)
        if code is not None:
            return code, fixed, dropped, spliced
        breaking = [f for f in fixed if _fixed_code(facts, _apply(module, facts, [f])[0], cpython)[0] is None]
        if not breaking:
            break
        dropped += breaking
        keep = [f for f in keep if f not in breaking and not (f.rule.code == "DEV001" and f not in fixed)]
    raise _Unparseable("internal error: devfix's fixes produced code that does not parse; file left unchanged")


def _fixed_code(facts: FileFacts, new_module: cst.Module, cpython: bool) -> tuple[bytes | None, bool]:
    """The fixed module's bytes, None where they do not parse; and whether they were spliced
    into the original text (only the edited statements generated) rather than generated whole."""
    text = facts.tree.fixed_text(new_module)
    return code_that_parses(new_module, cpython, text), text is not None


class _Unparseable(Exception):
    pass


def _run_rules(ctx: RuleContext, rules: Sequence[Rule]) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        try:
            findings.extend(rule.check(ctx))
        except Exception as error:  # isolate a rule's bug to this file
            raise RuleCrash(type(rule), error) from error
    return findings


def _apply(module: cst.Module, facts: FileFacts, findings: Sequence[Finding]) -> tuple[cst.Module, list[Finding]]:
    """Apply whole findings (all of a finding's edits, or none of them)."""
    if not findings:
        return module, []
    edits = [edit for finding in findings for edit in finding.edits]
    new_module, applied, subsumed = apply_edits(module, edits, facts.tree.ancestors)
    done = applied | subsumed
    fixed = [f for f in findings if f.edits and all(id(edit) in done for edit in f.edits)]
    partial = [f for f in findings if f not in fixed and any(id(edit) in applied for edit in f.edits)]
    if partial:
        # Some of a finding's edits lost to a conflict: apply whole findings only.
        keep = [edit for finding in fixed for edit in finding.edits]
        new_module, applied, subsumed = apply_edits(module, keep, facts.tree.ancestors)
        done = applied | subsumed
        fixed = [f for f in fixed if all(id(edit) in done for edit in f.edits)]
    return new_module, fixed


def _status(finding: Finding, config: Config) -> str:
    if not finding.fixable:
        return "no-fix"
    if finding.rule.safety == "unsafe" and not config.unsafe_fixes:
        return "unsafe-fix"
    return "fixable"


def fix_code(source: str, config: Config | None = None, *, fix: bool = True) -> tuple[str, list[Diagnostic]]:
    """Convenience API for tests and tools: fix a string, return (new source, diagnostics)."""
    result = process_source(source.encode("utf-8"), config or Config(), fix=fix)
    if result.error:
        raise ValueError(result.error)
    return result.new.decode("utf-8"), result.diagnostics

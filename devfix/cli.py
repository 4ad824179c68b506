"""The command line: options -> Config -> engine -> report. Nothing else lives here.

Exit codes (all commands): 0 nothing to report, 1 problems found or changes made/needed,
2 usage, configuration or per-file errors (a file that cannot be read, parsed or written; an
internal error). Errors win: a run with an error exits 2 even if it also fixed files. A file
with an error is reported as `path: error: <one line>`, left unchanged, and the run goes on.
Fixes waiting only for `--unsafe-fixes` are not problems left (apply exits 0 over them), and
`--exit-zero` turns 1 into 0 for report-only CI steps, never 2.

Streams: stdout carries one thing. The report goes to `--output-file`, else to stdout, except
under `apply --diff` and `apply -`, where stdout carries the diff or the fixed source and the
report goes to stderr.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, NoReturn, TypeVar, overload

import click

from devfix import __version__, suppressions
from devfix import rules as registry
from devfix.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from devfix.cache import Cache
from devfix.config import DATASET_PLACEMENTS, DEVICE_STYLES, Config, ConfigError
from devfix.files import discover_with_trees
from devfix.parallel import default_jobs
from devfix.report import (
    by_hand,
    cell_error_lines,
    location,
    summary,
    terminal,
    text_lines,
    undecided_line,
    unified_diff,
    with_suppression_notes,
)
from devfix.report.formats import FORMATS, render, statistics, statistics_lines
from devfix.report.summary_md import summary_markdown
from devfix.results import FileResult
from devfix.rules import lookup
from devfix.runner import process_project
from devfix.settings import Overrides, Settings, describe
from devfix.writer import WriteError, write_atomic

MAX_FILE_BYTES = 10 * 1024 * 1024
# A notebook's outputs (plots, logs) often weigh more than its code; only the code is parsed.
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024

Options = dict[str, Any]  # a command's options by name, as click gives them
F = TypeVar("F", bound=Callable[..., Any])


class OneLineErrors(click.Group):
    """Usage errors print one line (`devfix: error: ...`) and exit 2, never a traceback."""

    @overload
    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: Literal[True] = True,
        **extra: Any,
    ) -> NoReturn: ...

    @overload
    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = ...,
        **extra: Any,
    ) -> int: ...

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> int:
        try:
            result = super().main(
                args=args, prog_name=prog_name or "devfix", complete_var=complete_var, standalone_mode=False, **extra
            )
        except click.exceptions.Exit as done:
            code = done.exit_code
        except click.UsageError as error:
            hint = f" (see '{error.ctx.command_path} --help')" if error.ctx is not None else ""
            click.echo(f"devfix: error: {error.format_message()}{hint}", err=True)
            code = 2
        except click.ClickException as error:
            click.echo(f"devfix: error: {error.format_message()}", err=True)
            code = error.exit_code
        except click.Abort:
            click.echo("devfix: aborted", err=True)
            code = 130
        else:
            code = result if isinstance(result, int) else 0
        if standalone_mode:
            sys.exit(code)
        return code


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def _decorate(function: F, options: Sequence[Callable[[F], F]]) -> F:
    for option in reversed(options):
        function = option(function)
    return function


def selection_options(function: F) -> F:
    """Which files, which rules, which configuration: every command that runs the rules."""
    return _decorate(
        function,
        [
            click.argument("paths", nargs=-1, required=False, type=click.Path(path_type=Path)),
            click.option(
                "--files-from",
                type=click.File("r"),
                default=None,
                help="Also check the paths listed in this file, one a line (`-`: read them from stdin).",
            ),
            click.option(
                "--stdin-filename",
                default=None,
                help="With `-` as the path: the name of the source read on stdin (for its configuration, excludes and messages).",
            ),
            click.option(
                "--select", multiple=True, help="Only these rules (codes, prefixes or names; comma-separated)."
            ),
            click.option("--extend-select", multiple=True, help="Add rules that are off by default (e.g. DEV014)."),
            click.option("--ignore", multiple=True, help="Skip these rules."),
            click.option(
                "--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes marked unsafe (e.g. DEV013)."
            ),
            click.option(
                "--device-style",
                type=click.Choice(DEVICE_STYLES),
                default=None,
                help="Form of a new device declaration: `conditional` (torch.cuda) or `accelerator` (torch.accelerator).",
            ),
            click.option(
                "--dataset-placement",
                type=click.Choice(DATASET_PLACEMENTS),
                default=None,
                help="Where dataset tensors live: `pinned` CPU memory (default) or the `device`.",
            ),
            click.option(
                "--config",
                "config_path",
                type=click.Path(path_type=Path),
                default=None,
                help="pyproject.toml to read [tool.devfix] from (default: the nearest one).",
            ),
            click.option(
                "--exclude", multiple=True, help="Extra gitignore-style patterns to skip (from the working directory)."
            ),
            click.option(
                "--force-exclude",
                is_flag=True,
                help="Apply the excludes to files named on the command line too (for pre-commit).",
            ),
            click.option("--show-traceback", is_flag=True, help="Show the traceback of an internal error."),
            click.option(
                "--jobs",
                "-j",
                type=click.IntRange(min=0),
                default=0,
                metavar="N",
                help="Analyse in N processes (default 0: one per CPU). The output is the same for any N.",
            ),
            click.option("--no-cache", is_flag=True, help="Neither read nor write the cache of earlier results."),
            click.option(
                "--cache-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=None,
                help=f"Where the cache lives (default: {DEFAULT_CACHE_DIR}/ in the working directory).",
            ),
        ],
    )


def output_options(function: F) -> F:
    """How the report looks and where it goes: check and apply."""
    return _decorate(
        function,
        [
            click.option(
                "--output-format",
                "--format",
                "output_format",
                type=click.Choice(FORMATS),
                default="text",
                show_default=True,
                help="Report format: text for people; json, github (Actions annotations), sarif (code scanning), "
                "gitlab (Code Quality) or junit for CI. `--format` is the same option.",
            ),
            click.option(
                "--output-file",
                "-o",
                type=click.Path(dir_okay=False, path_type=Path),
                default=None,
                help="Write the report to this file instead of the terminal (the diff of `apply --diff` stays on stdout).",
            ),
            click.option(
                "--statistics", is_flag=True, help="Count the findings per rule instead of listing them (text or json)."
            ),
            click.option(
                "--exit-zero", is_flag=True, help="Exit 0 even when problems are found or left (errors still exit 2)."
            ),
            click.option(
                "-q", "--quiet", is_flag=True, help="Print the findings, errors and diff, without the summary lines."
            ),
            click.option(
                "--show-undecided",
                is_flag=True,
                help="List the places where devfix could not tell which device a value is on (left alone).",
            ),
        ],
    )


def common_options(function: F) -> F:
    return selection_options(output_options(function))


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="devfix")
def main() -> None:
    """devfix: find and fix PyTorch device-placement bugs.

    \b
    devfix apply --diff src/   show the fixes as a diff, change nothing (exit 1 if any)
    devfix apply src/          fix the files in place
    devfix check src/          report, never fix (exit 1 if anything is found)
    devfix rules               list the rules; `devfix explain DEV004` shows one
    devfix show-settings FILE  the configuration that applies to FILE
    devfix add-ignore src/     silence today's findings with comments (adopting devfix in CI)
    """


@main.command()
@common_options
@click.option(
    "--diff", is_flag=True, help="Dry run: print a unified diff, write nothing; exit 1 if anything would change."
)
@click.option(
    "--summary-md",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a Markdown summary of the fixes (per rule: count, what it fixes, an example hunk, files) for a pull request.",
)
@click.option(
    "--interactive",
    "-i",
    is_flag=True,
    help="Show each file's diff and ask: [y]es apply, [n]o skip, [a]ll the rest, [q]uit (skip the rest).",
)
@click.option(
    "--format-with",
    default=None,
    metavar="COMMAND",
    help='Run this formatter on the files devfix wrote, e.g. "ruff format" (the files\' names are appended).',
)
def apply(
    paths: tuple[Path, ...],
    diff: bool,
    summary_md: Path | None,
    interactive: bool,
    format_with: str | None,
    **options: Any,
) -> int:
    """Fix device-placement bugs in the files under PATHS, in place.

    With `-` as the only path, the source is read on stdin and the fixed source written to
    stdout (the report to stderr), for editors and pipes."""
    if interactive and (diff or Path("-") in paths):
        raise click.UsageError("--interactive asks about files to write: not with --diff or `-`")
    run = _run(paths, options, fix=True)
    results, trees = run.results, run.trees
    changed = [r for r in results if r.changed]
    if run.stdin is not None and not diff:
        sys.stdout.flush()
        out = sys.stdout.buffer
        out.write(results[0].new if results and results[0].error is None else run.stdin)
        out.flush()
    elif diff:
        for result in changed:
            for line in unified_diff(result).splitlines(keepends=True):
                click.echo(terminal.diff_line(line), nl=False, color=terminal.echo_color())
        sys.stdout.flush()  # the whole diff before the findings on stderr, in one terminal
    else:
        if interactive:
            ask = _Questions()
            changed = [result for result in changed if ask(result)]
        written = []
        for result in changed:
            try:
                write_atomic(Path(result.path), result.new, result.old, tree=trees[id(result)])
                written.append(result)
            except WriteError as error:
                result.error = str(error)
                result.diagnostics = []
        if format_with and written:
            _format_with(format_with, written)
    _report(results, options, diff_mode=diff, stdout_taken=diff or run.stdin is not None)
    if summary_md is not None:
        try:
            summary_md.write_text(summary_markdown(results, dry_run=diff), encoding="utf-8")
        except OSError as error:
            raise click.ClickException(
                f"cannot write the summary to '{summary_md}': {error.strerror or error}"
            ) from None
    remaining = any(by_hand(d) for r in results for d in r.diagnostics)
    if any(r.error or r.cell_errors for r in results):
        return 2
    if options["exit_zero"]:
        return 0
    if diff:
        return 1 if changed or remaining else 0
    # Like `ruff check --fix`: a run that fixed everything it found succeeded (scripts can
    # chain `devfix apply src/ && git commit`); problems left to fix by hand make it 1. Fixes
    # waiting for `--unsafe-fixes` are the user's decision, not work left: they do not count.
    return 1 if remaining else 0


@main.command()
@common_options
def check(paths: tuple[Path, ...], **options: Any) -> int:
    """Report device-placement bugs under PATHS without changing anything."""
    results = _run(paths, options, fix=False).results
    with_suppression_notes(results)
    _report(results, options, diff_mode=False, check_mode=True)
    if any(r.error or r.cell_errors for r in results):
        return 2
    if options["exit_zero"]:
        return 0
    return 1 if any(r.diagnostics for r in results) else 0


@main.command("add-ignore")
@selection_options
@click.option("-q", "--quiet", is_flag=True, help="Print only errors, not the count of comments added.")
def add_ignore(paths: tuple[Path, ...], **options: Any) -> int:
    """Silence what devfix finds under PATHS today: `# devfix: ignore[CODE]` on each line.

    For adopting devfix in CI on an existing code base (ruff's --add-noqa): the comments mark
    the known findings, and `check` then fails only on new ones. Fix them later one by one.
    Notebooks are left alone (a comment in a cell's source is the user's to write)."""
    added = 0
    files: set[str] = set()
    refused: set[tuple[str, int]] = set()
    for _round in range(3):  # silencing a fix also silences the declaration it needed: look again
        run = _run(paths, options, fix=False, files_only=True)
        results, trees = run.results, run.trees
        wanted: dict[int, tuple[FileResult, dict[int, set[str]]]] = {}
        for result in results:
            if result.error or result.path.lower().endswith(".ipynb"):
                continue
            # DEV001's declarations exist for the fixes that need them: once those are silenced
            # they are gone, so DEV001 is silenced only where it is all that is left
            others = any(d.code != "DEV001" for d in result.diagnostics)
            lines: dict[int, set[str]] = {}
            for d in result.diagnostics:
                if (result.path, d.line) not in refused and not (others and d.code == "DEV001"):
                    lines.setdefault(d.line, set()).add(d.code)
            if lines:
                wanted[id(result)] = (result, lines)
        changed = False
        for result, lines in wanted.values():
            new, cannot = suppressions.add_ignores(result.old, lines)
            refused.update((result.path, line) for line in cannot)
            if new != result.old:
                try:
                    write_atomic(Path(result.path), new, result.old, tree=trees[id(result)])
                except WriteError as error:
                    click.echo(f"{result.path}: error: {error}", err=True)
                    return 2
                added += len(lines) - len(cannot)
                files.add(result.path)
                changed = True
        if not changed:
            break
    for result in results:
        for line in _error_lines(result, options):
            click.echo(line, err=True)
        if result.path.lower().endswith(".ipynb") and result.diagnostics:
            click.echo(f"{result.path}: {len(result.diagnostics)} finding(s) in a notebook left as they are", err=True)
    for path, number in sorted(refused):
        click.echo(
            f"{path}:{number}: no comment can go at the end of this line (it ends inside a string or with a backslash)",
            err=True,
        )
    if not options["quiet"]:
        click.echo(f"Added {added} suppression{'s' * (added != 1)} to {len(files)} file{'s' * (len(files) != 1)}.")
    return 2 if any(r.error or r.cell_errors for r in results) else 0


@main.command("show-settings")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="pyproject.toml to read [tool.devfix] from (default: the nearest one).",
)
@click.option("--select", multiple=True, help="As for check: only these rules.")
@click.option("--extend-select", multiple=True, help="As for check: add rules that are off by default.")
@click.option("--ignore", multiple=True, help="As for check: skip these rules.")
@click.option("--exclude", multiple=True, help="As for check: extra patterns to skip.")
def show_settings(path: Path, **options: Any) -> int:
    """Print the configuration that applies to PATH: its file, every setting, the rules run."""
    try:
        click.echo(describe(_settings(options), path))
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    return 0


@main.command("rules")
def list_rules() -> None:
    """List every rule with its code, name, fix safety and summary."""
    for rule in registry.ALL_RULES:
        flags = rule.safety + ("" if rule.enabled_by_default else ", off by default")
        click.echo(f"{rule.code}  {rule.name:<28} ({flags})  {rule.summary}")


@main.command()
@click.argument("rule", required=False)
@click.option("--all", "everything", is_flag=True, help="Every rule's page (this is how docs/rules.md is made).")
def explain(rule: str | None, everything: bool) -> int:
    """Show the documentation of RULE (a code like DEV003 or a name like model-placement)."""
    if everything:
        click.echo(rules_reference(), nl=False)
        return 0
    if rule is None:
        raise click.UsageError("name a rule (e.g. `devfix explain DEV003`) or pass --all")
    try:
        matches = lookup(rule)
    except KeyError:
        raise click.UsageError(f"unknown rule '{rule}'; `devfix rules` lists them") from None
    for found in matches:
        click.echo(found.docs())
    return 0


def rules_reference() -> str:
    """docs/rules.md: every rule's page, generated from the rule classes themselves."""
    header = "# devfix rules\n\nGenerated by `devfix explain --all`; do not edit by hand.\n\n"
    return header + "\n".join(rule.docs() for rule in registry.ALL_RULES)


@dataclass
class _Run:
    results: list[FileResult]
    trees: dict[int, Path]  # id(result) -> the resolved tree its file was found in
    stdin: bytes | None = None  # the source read on stdin (`-`), else None


class _Questions:
    """--interactive: each file's diff, then one question. Per file, not per hunk: a file's
    fixes depend on each other (a moved batch needs the declaration three hunks up), and
    applying half of them could leave code that fails where the whole was correct. A file
    declined keeps its findings as fixable (exit 1: problems left)."""

    ANSWERS: ClassVar[dict[str, str]] = {"y": "yes", "n": "no", "a": "all", "q": "quit"}

    def __init__(self) -> None:
        self.rest: bool | None = None  # after [a]ll or [q]uit: the answer for every file left

    def __call__(self, result: FileResult) -> bool:
        accept = self.rest
        if accept is None:
            for line in unified_diff(result).splitlines(keepends=True):
                click.echo(terminal.diff_line(line), nl=False, color=terminal.echo_color())
            answer = self.ANSWERS[
                click.prompt(
                    f"Apply the fixes to {result.path}? [y]es, [n]o, [a]ll the rest, [q]uit",
                    type=click.Choice(list(self.ANSWERS)),
                    show_choices=False,
                    default="y",
                )
            ]
            accept = answer in ("yes", "all")
            if answer in ("all", "quit"):
                self.rest = accept
        if not accept:
            result.new = result.old
            result.diagnostics = [
                dataclasses.replace(d, status="fixable") if d.status == "fixed" else d for d in result.diagnostics
            ]
        return accept


def _format_with(command: str, written: list[FileResult]) -> None:
    """Run the user's formatter on the files devfix wrote: devfix keeps the file's style by
    itself, but a project whose CI checks `ruff format` or `black` wants the new lines
    formatted its way. A formatter that fails is an error on those files (exit 2)."""
    try:
        argv = [*shlex.split(command), *(result.path for result in written)]
        done = subprocess.run(argv, capture_output=True, text=True)
    except (OSError, ValueError) as error:
        problem = f"--format-with: cannot run '{command}': {getattr(error, 'strerror', None) or error}"
    else:
        if done.returncode == 0:
            return
        why = (done.stderr or done.stdout).strip().splitlines()
        problem = f"--format-with '{command}' failed (exit {done.returncode}){': ' + why[-1] if why else ''}"
    for result in written:
        result.error = f"{problem}; devfix's fixes are written"
        result.diagnostics = []


def _paths(paths: Sequence[Path], options: Options) -> list[Path]:
    """The paths of the command line and of `--files-from` (blank lines skipped)."""
    listed = list(paths)
    if options.get("files_from") is not None:
        listed += [Path(line.strip()) for line in options["files_from"].read().splitlines() if line.strip()]
    if not listed:
        raise click.UsageError("no paths given: name files or folders, `-` for stdin, or use --files-from")
    if Path("-") in listed and len(listed) > 1:
        raise click.UsageError("`-` (stdin) cannot be combined with other paths")
    return listed


def _run(paths: Sequence[Path], options: Options, fix: bool, files_only: bool = False) -> _Run:
    """Process every file, each with its own configuration (the nearest pyproject.toml's, the
    command line on top).

    Files are processed in the order of their paths, whatever order the command line gave:
    `check b a` and `check a b` are one run."""
    paths = _paths(paths, options)
    if paths == [Path("-")]:
        if files_only:
            raise click.UsageError("this command writes files; it does not read `-` (stdin)")
        return _run_stdin(options, fix)
    for path in paths:
        if not path.exists():
            raise click.UsageError(f"path '{path}' does not exist")
    try:
        settings = _settings(options)
        found = sorted(
            discover_with_trees(paths, is_excluded=settings.excluded, force_exclude=options["force_exclude"]),
            key=lambda item: _display(item[0]),
        )
        configs = [settings.for_path(path) for path, _ in found]
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    reads = [_read_file(path) for path, _ in found]
    with terminal.progress(len(reads), "devfix", enabled=not options.get("quiet")) as advance:
        cache = None if options.get("no_cache") else Cache(options.get("cache_dir") or Path(DEFAULT_CACHE_DIR))
        results = process_project(
            reads,
            configs[0] if configs else Config(),
            fix=fix,
            configs=configs,
            progress=advance,
            jobs=options.get("jobs") or default_jobs(),
            cache=cache,
        )
    return _Run(results, {id(result): tree for result, (_, tree) in zip(results, found)})


def _run_stdin(options: Options, fix: bool) -> _Run:
    """`-`: one source read on stdin, named by --stdin-filename (its configuration is that
    name's; with --force-exclude an excluded name is passed through untouched)."""
    data = sys.stdin.buffer.read()
    name = options.get("stdin_filename")
    path = Path(name) if name else Path("stdin.py")
    try:
        settings = _settings(options)
        config = settings.for_path(path)
        excluded = options["force_exclude"] and name is not None and settings.excluded_with_parents(path)
    except ConfigError as error:
        raise click.UsageError(str(error)) from None
    if excluded:
        return _Run([], {}, data)
    read = FileResult(_display(path) if name else "-", data, data)
    if len(data) > (MAX_NOTEBOOK_BYTES if path.suffix.lower() == ".ipynb" else MAX_FILE_BYTES):
        read.error = "skipped: too large"
    return _Run(process_project([read], config, fix=fix, configs=[config]), {}, data)


def _settings(options: Options) -> Settings:
    return Settings(
        Overrides(
            select=_split(options.get("select", ())),
            extend_select=_split(options.get("extend_select", ())),
            ignore=_split(options.get("ignore", ())),
            unsafe_fixes=options.get("unsafe_fixes"),
            device_style=options.get("device_style"),
            dataset_placement=options.get("dataset_placement"),
            exclude=tuple(options.get("exclude", ())),
        ),
        config_path=options.get("config_path"),
    )


def _read_file(path: Path) -> FileResult:
    """The file's bytes (as an unchanged result), or the reason they cannot be used."""
    shown = _display(path)
    try:
        limit = MAX_NOTEBOOK_BYTES if path.suffix.lower() == ".ipynb" else MAX_FILE_BYTES
        if path.stat().st_size > limit:
            return FileResult(shown, b"", b"", error=f"skipped: larger than {limit // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as error:
        return FileResult(shown, b"", b"", error=f"cannot read: {error.strerror or error}")
    if b"\0" in data and (b"torch" in data or b".cuda(" in data):
        return FileResult(shown, data, data, error="skipped: binary file (contains NUL bytes)")
    return FileResult(shown, data, data)


def _display(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if relative.startswith("..") else relative


class _Sink:
    """Where the report goes (docs: "Output"): `--output-file` if given; otherwise stdout, except
    under `apply --diff`, where stdout carries the diff and the report goes to stderr. So
    stdout never carries two things, and `apply --diff > fix.patch` is a clean patch."""

    def __init__(self, options: Options, stdout_taken: bool) -> None:
        self.file: Path | None = options.get("output_file")
        self.err = stdout_taken
        self.lines: list[str] = []

    def echo(self, text: str) -> None:
        if self.file is not None:
            self.lines.append(click.unstyle(text))
        else:
            click.echo(text, err=self.err, color=terminal.echo_color())

    def close(self) -> None:
        if self.file is None:
            return
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            self.file.write_text(
                "".join(line + ("" if line.endswith("\n") else "\n") for line in self.lines), encoding="utf-8"
            )
        except OSError as error:
            raise click.ClickException(f"cannot write the report to '{self.file}': {error.strerror or error}") from None


def _report(
    results: list[FileResult],
    options: Options,
    diff_mode: bool,
    check_mode: bool = False,
    stdout_taken: bool | None = None,
) -> None:
    """The report, where _Sink says. `stdout_taken`: stdout carries the diff or the fixed source."""
    sink = _Sink(options, diff_mode if stdout_taken is None else stdout_taken)
    output_format = options["output_format"]
    if options["statistics"] and output_format not in ("text", "json"):
        raise click.UsageError("--statistics prints text or json, not " + output_format)
    if output_format != "text":
        if options["statistics"]:
            sink.echo(json.dumps(statistics(results), indent=2))
        else:
            sink.echo(render(output_format, results).rstrip("\n"))
        if sink.file is not None:  # the report is in a file: a CI log still shows what failed
            for result in results:
                for line in _error_lines(result, options):
                    click.echo(line, err=True)
        sink.close()
        return
    for result in results:
        # errors on stderr when the report is on a terminal stream; in the file with the rest
        for line in _error_lines(result, options):
            if sink.file is None:
                click.echo(line, err=True)
            else:
                sink.echo(line)
        if result.error or options["statistics"]:
            continue
        for line in text_lines(result, dry_run=diff_mode, style=terminal.style):
            sink.echo(line)
        if options["show_undecided"]:
            cells = result.undecided_cells or [None] * len(result.undecided)
            for (number, column, code), cell in zip(result.undecided, cells):
                sink.echo(
                    f"{location(result.path, number, column, cell)}: undecided: `{code}` meets a value whose device devfix cannot tell; left alone"
                )
    if options["statistics"]:
        for line in statistics_lines(results):
            sink.echo(line)
    if not options["quiet"]:
        sink.echo(summary(results, diff_mode, check_mode))
        undecided = undecided_line(results, options["show_undecided"])
        if undecided:
            sink.echo(undecided)
    sink.close()


def _error_lines(result: FileResult, options: Options) -> list[str]:
    """A file or cell devfix could not read, in one line each (and the traceback on request)."""
    if result.error:
        lines = [f"{result.path}: error: {result.error}"]
        if options["show_traceback"] and result.traceback:
            lines.append(result.traceback)
        return lines
    return list(cell_error_lines(result))


def _register_verify() -> None:
    """`devfix verify` lives in devfix.verify and imports torch only when it runs."""
    try:
        from devfix.verify.command import verify_command
    except ImportError:
        return
    main.add_command(verify_command, "verify")


_register_verify()

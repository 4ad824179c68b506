"""Output for people: finding lines, summaries and unified diffs for review. The machine
formats (JSON, GitHub, SARIF, GitLab, JUnit) are in `devfix.report.formats`."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from devfix.results import Diagnostic, FileResult

STATUS_LABEL = {"fixed": "[fixed]", "fixable": "[*]", "unsafe-fix": "[unsafe-fix]", "no-fix": "[no-fix]"}


SUPPRESSION = "suppression"  # the code of a suppression comment that silences nothing (not a rule)


def with_suppression_notes(results: list[FileResult]) -> None:
    """`check` reports suppressions that silence nothing (unknown codes, stale ones) as findings
    of their own, code `suppression`, so every format and the exit code see them. `apply`
    does not: a stale comment is not a device bug to fix."""
    for result in results:
        if result.error:
            continue
        cells = result.suppression_cells or [None] * len(result.suppression_notes)
        result.diagnostics = result.diagnostics + [
            Diagnostic(line, column, SUPPRESSION, "unused-suppression", why, "no-fix", cell=cell)
            for (line, column, why), cell in zip(result.suppression_notes, cells)
        ]


def location(path: str, line: int, column: int, cell: int | None = None) -> str:
    """`path:line:col`, or in a notebook `path:cell N:line:col` (the line within the cell)."""
    return f"{path}:cell {cell}:{line}:{column}" if cell is not None else f"{path}:{line}:{column}"


def cell_error_lines(result: FileResult) -> Iterable[str]:
    """A notebook's cells that devfix could not read: never passed over in silence."""
    for cell, why in result.cell_errors:
        yield f"{result.path}:cell {cell}: error: {why}; cell left as it was"


def _plain(text: str, role: str) -> str:
    return text


def text_lines(result: FileResult, dry_run: bool = False, style: Callable[[str, str], str] = _plain) -> Iterable[str]:
    """One line a finding. `style(text, role)` may colour the parts (roles: `location`,
    `code`, and the status: `fixed`, `fixable`, `unsafe-fix`, `no-fix`); the text is the same."""
    if result.error:
        yield f"{result.path}: error: {result.error}"
        return
    for d in sorted(result.diagnostics, key=lambda d: (d.cell or 0, d.line, d.column, d.code)):
        where = style(location(result.path, d.line, d.column, d.cell), "location")
        if d.code == SUPPRESSION:
            yield f"{where}: {d.message}"
            continue
        label = "[would fix]" if dry_run and d.status == "fixed" else STATUS_LABEL[d.status]
        line = f"{where}: {style(d.code, 'code')} {style(label, d.status)} {d.message}"
        if d.status == "unsafe-fix":
            line += " (unsafe fix available: run with --unsafe-fixes)"
        elif d.hint and d.status == "no-fix":
            line += f" — {d.hint}"
        yield line


def unified_diff(result: FileResult) -> str:
    """A diff with `a/` and `b/` paths, as git prints them. For a notebook, one diff per
    changed cell, of the cell's source as Jupyter shows it (`a/nb.ipynb:cell 3`): the JSON
    around it is unchanged, and diffing its escaped strings would be unreadable."""
    if not result.changed:
        return ""
    path = result.path.replace("\\", "/").lstrip("/")
    if result.cells:
        return "".join(
            _diff(_cell_lines(old), _cell_lines(new), f"{path}:cell {cell}") for cell, old, new in result.cells
        )
    return _diff(_decode(result.old).splitlines(keepends=True), _decode(result.new).splitlines(keepends=True), path)


def _cell_lines(source: str) -> list[str]:
    """A cell's lines, the last one ended like the others: Jupyter stores no final newline,
    and a diff that says so at every cell is noise."""
    lines = source.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def _diff(old: list[str], new: list[str], path: str) -> str:
    lines: list[str] = []
    for line in _unified(old, new, f"a/{path}", f"b/{path}"):
        lines.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _unified(old: list[str], new: list[str], fromfile: str, tofile: str, context: int = 3) -> Iterable[str]:
    """`difflib.unified_diff`, without its "autojunk" heuristic: in files over 200 lines it
    treats frequent lines (blank ones) as junk and shows unchanged lines as replaced."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    first = True
    for group in matcher.get_grouped_opcodes(context):
        if first:
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
            first = False
        (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
        yield f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n"
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[a1:a2])
                continue
            yield from ("-" + line for line in old[a1:a2])
            yield from ("+" + line for line in new[b1:b2])


def _range(start: int, stop: int) -> str:
    """A unified diff hunk range, as difflib writes it."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def by_hand(d: Diagnostic) -> bool:
    """A finding a person has to fix: neither fixed nor waiting only for `--unsafe-fixes`."""
    return d.status not in ("fixed", "unsafe-fix")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def summary(results: list[FileResult], dry_run: bool, check_mode: bool = False) -> str:
    """The run in one line. Unsafe fixes are counted apart ("N more fixes available with
    `--unsafe-fixes`"): they wait for a decision, not for a person's edit."""
    checked = len(results)
    findings = [d for r in results for d in r.diagnostics]
    unsafe = sum(1 for d in findings if d.status == "unsafe-fix")
    errors = sum(1 for r in results if r.error or r.cell_errors)
    more = f"{unsafe} more fix{'es' * (unsafe != 1)} available with `--unsafe-fixes`" if unsafe else ""
    if check_mode:
        fixable = sum(1 for d in findings if d.status == "fixable")
        text = f"Found {_plural(len(findings), 'problem')}" if findings else "No problems found"
        notes = []
        if fixable:
            notes.append(f"{fixable} fixable with `devfix apply`")
        if more:
            notes.append(more)
        if notes:
            text += f" ({'; '.join(notes)})"
        if errors:
            text += f"; {_plural(errors, 'file')} with errors"
        return f"{text} ({_plural(checked, 'file')} checked)."
    fixed = sum(1 for d in findings if d.status == "fixed")
    files = sum(1 for r in results if r.changed)
    remaining = sum(1 for d in findings if by_hand(d))
    verb = "Would fix" if dry_run else "Fixed"
    parts = []
    if fixed:
        parts.append(f"{verb} {_plural(fixed, 'problem')} in {_plural(files, 'file')}")
    if more:
        parts.append(more)
    if remaining:
        parts.append(f"{_plural(remaining, 'problem')} left to fix by hand")
    if errors:
        parts.append(f"{_plural(errors, 'file')} with errors")
    if not parts:
        parts.append("No problems found")
    return f"{'; '.join(parts)} ({_plural(checked, 'file')} checked)."


def undecided_line(results: list[FileResult], shown: bool) -> str:
    """What the run did not cover: meetings of values devfix could not place, which it never
    edits (a helper, a framework or a branch placed one side). Empty when there are none."""
    count = sum(len(r.undecided) for r in results if not r.error)
    if not count:
        return ""
    files = sum(1 for r in results if r.undecided and not r.error)
    where = f"{_plural(count, 'place')} in {_plural(files, 'file')}"
    more = "" if shown else " (`--show-undecided` lists them)"
    return f"Not covered: at {where} a value meets one whose device devfix cannot tell; left alone{more}."

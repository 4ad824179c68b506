"""`apply --summary-md FILE`: the description of a migration pull request, in Markdown.

A reviewer of a pull request that touches fifty files wants to know, per rule: how many
changes, what kind of change it is, one real example, and which files. The example is the
hunk of this run's diff that holds the rule's first finding, so it shows the code as changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from devfix import rules as registry
from devfix.report import unified_diff
from devfix.results import Diagnostic, FileResult

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_CELL = re.compile(r":cell (\d+)$")


def _hunks(result: FileResult) -> list[tuple[int | None, int, int, str]]:
    """The diff's hunks as (cell, first old line, last old line, text)."""
    hunks = []
    cell: int | None = None
    current: list[str] = []
    start = end = 0

    def close() -> None:
        if current:
            hunks.append((cell, start, end, "".join(current)))

    for line in unified_diff(result).splitlines(keepends=True):
        if line.startswith("--- a/"):
            close()
            current = []
            found = _CELL.search(line.rstrip("\n"))
            cell = int(found.group(1)) if found else None
            continue
        if line.startswith("+++ b/"):
            continue
        match = _HUNK.match(line)
        if match:
            close()
            start = int(match.group(1))
            length = int(match.group(2)) if match.group(2) is not None else 1
            end = start + max(length, 1) - 1
            current = [line]
            continue
        if current:
            current.append(line)
    close()
    return hunks


def _example(result: FileResult, finding: Diagnostic) -> str | None:
    """The hunk holding the finding's first edit (a declaration is made far from the line it
    is reported at), or its position."""
    cell, line = (finding.edits[0].cell, finding.edits[0].line) if finding.edits else (finding.cell, finding.line)
    for hunk_cell, start, end, text in _hunks(result):
        if hunk_cell == cell and start <= line <= end:
            return text
    return None


def summary_markdown(results: Sequence[FileResult], dry_run: bool) -> str:
    """The Markdown summary of the fixes of `results` (fixed or, in a dry run, to be fixed)."""
    by_rule: dict[str, list[tuple[FileResult, Diagnostic]]] = {}
    for result in results:
        if result.error:
            continue
        for d in result.diagnostics:
            if d.status == "fixed":
                by_rule.setdefault(d.code, []).append((result, d))
    total = sum(len(found) for found in by_rule.values())
    files = sorted({result.path for found in by_rule.values() for result, _ in found})
    verb = "would fix" if dry_run else "fixed"
    lines = ["# devfix: device-placement fixes", ""]
    if not total:
        lines.append(f"No fixes ({len(results)} file{'s' * (len(results) != 1)} checked).")
        return "\n".join(lines) + "\n"
    lines += [
        f"devfix {verb} {total} problem{'s' * (total != 1)} in {len(files)} file{'s' * (len(files) != 1)} "
        f"({len(results)} checked).",
        "",
        "| Rule | Fixes | What it fixes |",
        "| --- | --- | --- |",
    ]
    order = sorted(by_rule, key=lambda code: (-len(by_rule[code]), code))
    for code in order:
        rule = registry.BY_CODE.get(code)
        what = getattr(rule, "summary", "").replace("|", "\\|")
        lines.append(f"| {code} {getattr(rule, 'name', '')} | {len(by_rule[code])} | {what} |")
    for code in order:
        rule = registry.BY_CODE.get(code)
        found = by_rule[code]
        touched = sorted({result.path for result, _ in found})
        lines += ["", f"## {code} {getattr(rule, 'name', '')} ({len(found)})", "", getattr(rule, "summary", ""), ""]
        for result, d in found:
            example = _example(result, d)
            if example:
                where = f"{result.path}, cell {d.cell}" if d.cell is not None else result.path
                lines += [f"Example (`{where}`):", "", "```diff", example.rstrip("\n"), "```", ""]
                break
        lines.append("Files: " + ", ".join(f"`{path}`" for path in touched))
    return "\n".join(lines) + "\n"

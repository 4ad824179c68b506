"""Machine formats of a run's findings: JSON, GitHub annotations, SARIF, GitLab Code Quality
and JUnit XML, for CI systems and review tools.

Each format writes only the fields its consumers read, by hand (no SARIF or JUnit library:
the formats are small, and a dependency for a few fields is not worth its weight). Every
format carries every finding and every file that could not be read; a notebook finding's
line is a line of its cell, so each format says the cell where it has room for it (a field
in JSON, SARIF's `properties`, the text elsewhere) and never points at a line of the
notebook's JSON, which would annotate the wrong line.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TypedDict
from xml.etree import ElementTree

from devfix import __version__
from devfix import rules as registry
from devfix.results import Diagnostic, FileResult, FixEdit

FORMATS = ("text", "json", "github", "sarif", "gitlab", "junit")
INFORMATION_URI = "https://github.com/devfix/devfix"


def render(output_format: str, results: Sequence[FileResult]) -> str:
    """The whole report of `results` in `output_format` (any of FORMATS but `text`)."""
    renderers = {
        "json": json_report,
        "github": github_report,
        "sarif": sarif_report,
        "gitlab": gitlab_report,
        "junit": junit_report,
    }
    return renderers[output_format](results)


def _where(result: FileResult, d: Diagnostic) -> str:
    cell = f"cell {d.cell}, " if d.cell is not None else ""
    return f"{result.path}:{cell}line {d.line}, column {d.column}"


def _sorted(result: FileResult) -> list[Diagnostic]:
    return sorted(result.diagnostics, key=lambda d: (d.cell or 0, d.line, d.column, d.code))


def _edit_json(edit: FixEdit) -> dict[str, object]:
    return {
        "kind": edit.kind,
        **({"cell": edit.cell} if edit.cell is not None else {}),
        "location": {"line": edit.line, "column": edit.column},
        "end_location": {"line": edit.end_line, "column": edit.end_column},
        "content": edit.content,
    }


def _fix_json(d: Diagnostic) -> dict[str, object] | None:
    """The finding's fix: how safe it is, whether this run applied it, and its edits."""
    if not d.edits:
        return None
    rule = registry.BY_CODE.get(d.code)
    return {
        "applicability": getattr(rule, "safety", "safe"),
        "applied": d.status == "fixed",
        "edits": [_edit_json(edit) for edit in d.edits],
    }


def json_report(results: Iterable[FileResult]) -> str:
    """A list of objects, one per finding (or file error), with the finding's range (`line`,
    `column` to `end_line`, `end_column`, exclusive), `code`, `status` and its `fix`."""
    items: list[dict[str, object]] = []
    for result in results:
        if result.error:
            items.append({"path": result.path, "error": result.error})
            continue
        items.extend({"path": result.path, "cell": cell, "error": why} for cell, why in result.cell_errors)
        for d in _sorted(result):
            items.append(
                {
                    "path": result.path,
                    **({"cell": d.cell} if d.cell is not None else {}),
                    "line": d.line,
                    "column": d.column,
                    "end_line": d.end_line or d.line,
                    "end_column": d.end_column or d.column,
                    "code": d.code,
                    "name": d.name,
                    "message": d.message,
                    "status": d.status,
                    "fixable": d.status in ("fixed", "fixable", "unsafe-fix"),
                    "hint": d.hint,
                    "fix": _fix_json(d),
                }
            )
    return json.dumps(items, indent=2)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_report(results: Iterable[FileResult]) -> str:
    """GitHub Actions workflow commands: one `::error` annotation per finding, shown on the
    pull request's diff. A notebook finding annotates the file, its cell named in the text."""
    lines = []
    for result in results:
        path = _escape_property(result.path)
        if result.error:
            lines.append(f"::error file={path},title=devfix::{_escape_data(result.error)}")
            continue
        for cell, why in result.cell_errors:
            lines.append(f"::error file={path},title=devfix::{_escape_data(f'cell {cell}: {why}')}")
        for d in _sorted(result):
            title = _escape_property(f"devfix ({d.code})")
            if d.cell is None:
                where = f"file={path},line={d.line},col={d.column}"
                if d.end_line:
                    where += f",endLine={d.end_line},endColumn={d.end_column}"
                text = f"{d.code} [{d.status}] {d.message}"
            else:
                where = f"file={path}"
                text = f"cell {d.cell}, line {d.line}: {d.code} [{d.status}] {d.message}"
            lines.append(f"::error title={title},{where}::{_escape_data(text)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _uri(path: str) -> str:
    return path.replace("\\", "/")


def sarif_report(results: Sequence[FileResult]) -> str:
    """SARIF 2.1.0, as GitHub code scanning reads it: the rules that ran, one result per
    finding, and files that could not be read as tool notifications."""
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "properties": {"fix": rule.safety},
        }
        for rule in registry.ALL_RULES
    ]
    index = {rule.code: number for number, rule in enumerate(registry.ALL_RULES)}
    found = []
    notifications = []
    for result in results:
        if result.error or result.cell_errors:
            problems = [(None, result.error)] if result.error else list(result.cell_errors)
            for cell, why in problems:
                text = f"cell {cell}: {why}" if cell is not None else str(why)
                notifications.append(
                    {
                        "level": "error",
                        "message": {"text": text},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(result.path)}}}],
                    }
                )
            if result.error:
                continue
        for d in _sorted(result):
            location: dict[str, object] = {"artifactLocation": {"uri": _uri(result.path)}}
            if d.cell is None:
                location["region"] = {
                    "startLine": d.line,
                    "startColumn": d.column,
                    "endLine": d.end_line or d.line,
                    "endColumn": d.end_column or d.column,
                }
            item: dict[str, object] = {
                "ruleId": d.code,
                "level": "error" if d.status == "no-fix" else "warning",
                "message": {"text": d.message if d.cell is None else f"cell {d.cell}, line {d.line}: {d.message}"},
                "locations": [{"physicalLocation": location}],
                "properties": {
                    "status": d.status,
                    **({"cell": d.cell, "cellLine": d.line} if d.cell is not None else {}),
                },
            }
            if d.code in index:
                item["ruleIndex"] = index[d.code]
            found.append(item)
    run = {
        "tool": {
            "driver": {"name": "devfix", "version": __version__, "informationUri": INFORMATION_URI, "rules": rules}
        },
        "results": found,
        "invocations": [{"executionSuccessful": not notifications, "toolExecutionNotifications": notifications}],
    }
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(document, indent=2)


def gitlab_report(results: Iterable[FileResult]) -> str:
    """GitLab Code Quality: a JSON list of issues, each with a stable fingerprint (path, code,
    message and the count of equal ones before it, not the line, so an edit above a finding
    does not make GitLab see it as new)."""
    issues = []
    seen: Counter[tuple[str, str, str]] = Counter()
    for result in results:
        problems = []
        if result.error:
            problems.append(("devfix/error", result.error, 1, "major"))
        else:
            problems.extend(("devfix/error", f"cell {cell}: {why}", 1, "major") for cell, why in result.cell_errors)
            for d in _sorted(result):
                text = (
                    f"{d.code} {d.message}" if d.cell is None else f"{d.code} cell {d.cell}, line {d.line}: {d.message}"
                )
                problems.append(
                    (d.code, text, d.line if d.cell is None else 1, "critical" if d.status == "no-fix" else "major")
                )
        for check, text, line, severity in problems:
            key = (result.path, check, text)
            seen[key] += 1
            fingerprint = hashlib.sha256("\0".join([*key, str(seen[key])]).encode("utf-8")).hexdigest()
            issues.append(
                {
                    "description": text,
                    "check_name": check,
                    "fingerprint": fingerprint,
                    "severity": severity,
                    "location": {"path": _uri(result.path), "lines": {"begin": line}},
                }
            )
    return json.dumps(issues, indent=2)


def junit_report(results: Sequence[FileResult]) -> str:
    """JUnit XML: a test suite per file, a failed test case per finding (an errored one per
    file or cell that could not be read); a file without findings is one passing case, so
    the CI's test view counts what was checked."""
    root = ElementTree.Element("testsuites", name="devfix")
    total = failures = errors = 0
    for result in results:
        suite = ElementTree.SubElement(root, "testsuite", name=result.path)
        cases = 0
        suite_failures = suite_errors = 0
        problems = [(None, result.error)] if result.error else list(result.cell_errors)
        for cell, why in problems:
            case = ElementTree.SubElement(
                suite, "testcase", name=f"cell {cell}" if cell is not None else "read", classname=result.path
            )
            ElementTree.SubElement(case, "error", message=str(why)).text = str(why)
            cases += 1
            suite_errors += 1
        if not result.error:
            for d in _sorted(result):
                case = ElementTree.SubElement(
                    suite, "testcase", name=f"{d.code} {_where(result, d)}", classname=result.path
                )
                failure = ElementTree.SubElement(case, "failure", message=d.message, type=d.code)
                failure.text = f"{_where(result, d)}: {d.code} [{d.status}] {d.message}"
                cases += 1
                suite_failures += 1
            if not result.diagnostics and not result.cell_errors:
                ElementTree.SubElement(suite, "testcase", name="no problems", classname=result.path)
                cases += 1
        suite.set("tests", str(cases))
        suite.set("failures", str(suite_failures))
        suite.set("errors", str(suite_errors))
        total += cases
        failures += suite_failures
        errors += suite_errors
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


class RuleCount(TypedDict):
    """One rule's line of `--statistics` (JSON as it is)."""

    code: str
    name: str
    count: int
    statuses: dict[str, int]  # status -> findings


def statistics(results: Iterable[FileResult]) -> list[RuleCount]:
    """`--statistics`: per rule found, most frequent first: its code, name, count and how the
    findings stand (`{"fixed": 3, "no-fix": 1}`)."""
    counts: Counter[str] = Counter()
    statuses: dict[str, Counter[str]] = {}
    names: dict[str, str] = {}
    for result in results:
        if result.error:
            continue
        for d in result.diagnostics:
            counts[d.code] += 1
            names[d.code] = d.name
            statuses.setdefault(d.code, Counter())[d.status] += 1
    return [
        {"code": code, "name": names[code], "count": count, "statuses": dict(sorted(statuses[code].items()))}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def statistics_lines(results: Iterable[FileResult]) -> list[str]:
    """`--statistics` as text: `    3  DEV002  hard-coded-cuda   (2 fixable, 1 no-fix)`."""
    lines = []
    for row in statistics(results):
        how = ", ".join(f"{n} {status}" for status, n in row["statuses"].items())
        lines.append(f"{row['count']:>5}  {row['code']}  {row['name']:<28} ({how})")
    return lines

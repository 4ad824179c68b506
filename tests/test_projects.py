"""Multi-file fixtures: each folder of `tests/fixtures/projects/` is one project, run as one.

A case is fixed as `devfix apply` fixes a folder (the files analysed together, imports
linked). Checked for every case: the diff over all its files and the findings (one
snapshot a reviewer reads), that a second run changes nothing, and, for the files marked
`# devfix: entry`, that the fixed project passes `devfix verify` while the input fails it (or,
a hard-coded CUDA the simulated GPU runs, dies when run plainly on this CPU-only machine and
runs once fixed).
Folders named `ok_*` are correct projects: nothing reported, every byte kept.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from devfix.config import Config
from devfix.results import FileResult
from devfix.runner import process_project

PROJECTS = Path(__file__).parent / "fixtures" / "projects"
CASES = sorted(p.name for p in PROJECTS.iterdir() if p.is_dir())


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.py"))}


def _run(root: Path, fix: bool = True) -> list[FileResult]:
    reads = [FileResult(str(root / name), data, data) for name, data in _files(root).items()]
    return process_project(reads, Config(), fix=fix)


def _report(root: Path, results: list[FileResult]) -> str:
    lines = []
    for result in results:
        name = Path(result.path).relative_to(root).as_posix()
        assert result.error is None, f"{name}: {result.error}"
        if result.changed:
            old, new = result.old.decode().splitlines(True), result.new.decode().splitlines(True)
            lines.extend(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}"))
        lines.extend(f"{name}:{d.line}:{d.column} {d.code} [{d.status}] {d.message}\n" for d in result.diagnostics)
    return "".join(lines)


def _entries(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*.py")) if p.read_text(encoding="utf-8").startswith("# devfix: entry")]


def _write(root: Path, results: list[FileResult]) -> None:
    for result in results:
        Path(result.path).write_bytes(result.new)


@pytest.fixture
def project(request, tmp_path):
    root = tmp_path / request.param
    shutil.copytree(PROJECTS / request.param, root)
    return root


@pytest.mark.parametrize("project", CASES, indirect=True)
def test_project_fix(project, findings_snapshot):
    results = _run(project)
    report = _report(project, results)
    if project.name.startswith("ok_"):
        assert report == "", "a correct project must come out unchanged, with nothing reported"
    else:
        assert any(r.changed for r in results), "a positive project must be fixed"
        checked = _run(project, fix=False)  # `check` reports what `apply` fixes, at the same places
        key = lambda rs: [(r.path, d.line, d.column, d.code, d.message) for r in rs for d in r.diagnostics]  # noqa: E731
        assert key(checked) == key(results)
    assert report == findings_snapshot


@pytest.mark.parametrize("project", CASES, indirect=True)
def test_project_fix_is_idempotent(project):
    _write(project, _run(project))
    again = _run(project)
    assert not any(r.changed for r in again), "a second run must change nothing"
    assert not [d for r in again for d in r.diagnostics if d.status in ("fixed", "fixable")]


def _verify(script_runner, script: Path):
    # `--cpu-only-load` loads every checkpoint as a CPU-only machine would, unless the entry
    # says it reloads only what the same run saved (`# devfix: verify-same-machine  (why)`)
    head = script.read_text(encoding="utf-8").splitlines()[:3]
    same_machine = any(line.startswith("# devfix: verify-same-machine") for line in head)
    options = [] if same_machine else ["--cpu-only-load"]
    code, output = script_runner.run(["-m", "devfix.verify", "--json", *options, script], cwd=script.parent)
    report = next((json.loads(line) for line in reversed(output.strip().splitlines()) if line.startswith("{")), {})
    return code, report.get("verdict"), output, report.get("rule")


@pytest.mark.parametrize("project", CASES, indirect=True)
def test_project_entry_passes_verify_after_the_fix_and_fails_before(project, script_runner):
    entries = _entries(project)
    assert entries, "mark the entry script(s) with `# devfix: entry` on the first line"
    results = _run(project)
    dies_on_cpu = []
    if not project.name.startswith("ok_"):
        before = {e.name: _verify(script_runner, e) for e in entries}
        failing = {name: report for name, report in before.items() if report[0] != 0}
        if not failing:
            # a hard-coded CUDA runs on the simulated GPU: the bug is the crash without one
            dies_on_cpu = [e for e in entries if script_runner.run([e], cwd=e.parent)[0] != 0]
        assert failing or dies_on_cpu, "the input project runs cleanly on the simulated GPU and on the CPU: not a bug"
        reported = {d.code for r in results for d in r.diagnostics}
        for name, (_, verdict, output, rule) in failing.items():
            # verify's hint names the rule that fixes what it met, and devfix reported that rule
            assert verdict == "device-error" and rule in reported, (name, rule, sorted(reported), output[-2000:])
    _write(project, results)
    for entry in entries:
        if "# devfix: no-run" in entry.read_text(encoding="utf-8").splitlines()[:3]:
            continue  # needs what no test machine has (a compiled CUDA kernel): its snapshot says it is unchanged
        code, verdict, output, _ = _verify(script_runner, entry)
        assert code == 0 and verdict == "ok", output[-3000:]
    for entry in dies_on_cpu:
        code, output = script_runner.run([entry], cwd=entry.parent)
        assert code == 0, output[-3000:]

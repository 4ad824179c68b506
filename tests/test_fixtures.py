"""Every fixture, automatically: snapshot, parses, idempotent, layout kept, and it runs."""

from __future__ import annotations

import io
import json
import tokenize
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest
from fixture_cases import all_cases
from script_runner import real_gpu_count, run_with_probe

from devfix.engine import fix_code

CASES = all_cases()
POSITIVE = [c for c in CASES if not c.negative]
RUNNABLE = [c for c in CASES if c.runnable]
ids = lambda cases: [c.id for c in cases]  # noqa: E731


def fixed(case):
    return fix_code(case.source(), case.config)


def _pending_done(case) -> str:
    return (
        f"{case.rule} now reports its pending fixture {case.path.name}: delete its `# devfix: pending` line,"
        " then record its snapshots (`pytest --snapshot-update` on the whole suite) and read them"
    )


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_fixture_output(case, py_snapshot):
    source = case.source()
    new, diagnostics = fixed(case)
    if case.pending:  # its rule does not report it yet: nothing is recorded
        assert not any(d.code == case.rule for d in diagnostics), _pending_done(case)
    elif case.negative:
        assert new == source, "correct code must come out byte-for-byte unchanged"
        assert diagnostics == [], f"correct code must not be reported: {diagnostics}"
    else:
        assert new != source, "a positive fixture must be fixed"
        assert any(d.code == case.rule for d in diagnostics), f"{case.rule} must report this fixture"
        assert new == py_snapshot


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_fixture_findings(case, findings_snapshot):
    """What devfix reports is part of the contract: position, code, status and message of
    every finding, in the original file, the same for `check` and `apply`."""
    source = case.source()
    _, applied = fixed(case)
    _, checked = fix_code(source, case.config, fix=False)
    lines = [
        f"{d.line}:{d.column} {d.code} [{d.status}] {d.message}"
        + (f" — {d.hint}" if d.status == "no-fix" and d.hint else "")
        for d in applied
    ]
    assert [(d.line, d.column, d.code, d.message) for d in checked] == [
        (d.line, d.column, d.code, d.message) for d in applied
    ]
    if case.pending:
        assert not any(d.code == case.rule for d in applied), _pending_done(case)
        return
    assert "\n".join(lines) + "\n" == findings_snapshot


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_fixture_output_parses_and_is_idempotent(case):
    new, _ = fixed(case)
    compile(new, str(case.path), "exec")
    cst.parse_module(new)
    again, diagnostics = fix_code(new, case.config)
    assert again == new, "a second run must change nothing"
    assert [d for d in diagnostics if d.status == "fixed"] == []


def _comments(text: str) -> Counter:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return Counter(token.string for token in tokens if token.type == tokenize.COMMENT)


@pytest.mark.parametrize("case", POSITIVE, ids=ids(POSITIVE))
def test_fixture_keeps_comments_and_blank_lines(case):
    source = case.source()
    new, _ = fixed(case)
    assert not (_comments(source) - _comments(new)), "every comment of the input must survive"
    blank = lambda text: sum(1 for line in text.splitlines() if not line.strip())  # noqa: E731
    assert blank(new) >= blank(source)


def _write_fixed(case, tmp_path: Path) -> Path:
    new, _ = fixed(case)
    script = tmp_path / f"{case.rule}_{case.name}.py"
    script.write_text(new, encoding="utf-8")
    return script


@pytest.mark.parametrize("case", RUNNABLE, ids=ids(RUNNABLE))
def test_fixed_fixture_runs_on_cpu(case, tmp_path, script_runner):
    script = _write_fixed(case, tmp_path)
    returncode, output = script_runner.run([script], cwd=tmp_path)
    assert returncode == 0, output[-3000:]


@pytest.mark.gpu
@pytest.mark.parametrize("case", RUNNABLE, ids=ids(RUNNABLE))
def test_fixed_fixture_runs_on_a_real_gpu(case, tmp_path):
    """On a CUDA machine a fixed fixture must run with its model on the GPU, not merely run;
    a correct (`ok_`) one must run, wherever it chose to put its model. Two directives make
    the exceptions explicit, and each is checked: `fails-on-gpu` (a line devfix reports but
    cannot fix, or correct-looking code the GPU itself refuses) and `weights-on-cpu` (the
    script's own option keeps its model on the CPU)."""
    if "verify-devices=2" in case.directives and real_gpu_count() < 2:
        pytest.skip("needs a second GPU (cuda:1); this machine has one")
    result = run_with_probe(_write_fixed(case, tmp_path), cuda=True)
    if "fails-on-gpu" in case.directives:
        assert result.returncode != 0, "declared `fails-on-gpu`, but it runs on the GPU: drop the directive"
        return
    assert result.returncode == 0, result.stderr[-3000:]
    probe = [line for line in result.stdout.splitlines() if line.startswith("DEVFIX_PROBE ")]
    devices = json.loads(probe[-1].split(" ", 1)[1])["parameter_devices"]
    if "weights-on-cpu" in case.directives:
        assert devices == ["cpu"], f"declared `weights-on-cpu`, but weights were seen on {devices}"
    elif devices and not case.negative:  # a fixed script that runs a model runs it on the GPU
        assert devices == ["cuda"], f"weights seen on {devices}"

"""scripts/new_rule.py, run on a copy of the repository: the rule it writes is discovered, shown
by `devfix rules` and `devfix explain`, its docs regenerate, and the suite's tests of rules and
fixtures pass with it. Nothing is written into this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = ["conftest.py", "script_runner.py", "forkserver.py", "fixture_cases.py", "test_fixtures.py"]
SUPPORT += ["test_rule_examples.py", "gpu_probe.py"]  # the probe: the `gpu` tests run it on a CUDA machine


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # the copy's devfix, with its new rule, first; packages installed by path stay reachable
    path = os.pathsep.join(p for p in (str(copy), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The parts of this repository a new rule touches, with DEV016 scaffolded into them."""
    copy = tmp_path_factory.mktemp("repository")
    shutil.copytree(ROOT / "devfix", copy / "devfix", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scripts", copy / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "docs").mkdir()
    (copy / "tests").mkdir()
    for name in ["pyproject.toml", "README.md", "docs/rules.md", *(f"tests/{name}" for name in SUPPORT)]:
        shutil.copy2(ROOT / name, copy / name)
    before = {path for path in copy.rglob("*") if path.is_file()}
    made = _run(copy, "scripts/new_rule.py", "DEV016", "my-rule-name", "A thing is wrong.")
    assert made.returncode == 0, made.stderr
    assert "python scripts/update_docs.py" in made.stdout
    new = [path.relative_to(copy) for path in copy.rglob("*") if path.is_file() and path not in before]
    written = sorted(str(path) for path in new if "__pycache__" not in path.parts)
    assert written == [
        "devfix/rules/dev016_my_rule_name.py",
        "tests/__snapshots__/test_fixtures/test_fixture_findings[DEV016-ok_my_rule_name].txt",
        "tests/fixtures/DEV016/my_rule_name.py",
        "tests/fixtures/DEV016/ok_my_rule_name.py",
        "tests/test_dev016_my_rule_name.py",
    ]
    return copy


def test_the_new_rule_is_discovered_and_documented(copy: Path) -> None:
    listed = _run(copy, "-m", "devfix", "rules").stdout.splitlines()
    assert listed[-1].split() == ["DEV016", "my-rule-name", "(safe)", "A", "thing", "is", "wrong."]
    assert _run(copy, "-m", "devfix", "explain", "my-rule-name").stdout.startswith("# DEV016 my-rule-name\n")
    assert _run(copy, "scripts/update_docs.py", "--check").returncode == 1  # the two generated files
    assert _run(copy, "scripts/update_docs.py").returncode == 0
    assert _run(copy, "scripts/update_docs.py", "--check").returncode == 0
    assert "| DEV016 | my-rule-name | safe | A thing is wrong. |" in (copy / "README.md").read_text(encoding="utf-8")
    assert "# DEV016 my-rule-name" in (copy / "docs" / "rules.md").read_text(encoding="utf-8")
    assert not list((ROOT / "devfix" / "rules").glob("dev016_*.py")) and not (ROOT / "tests/fixtures/DEV016").exists()


def test_the_suite_passes_with_the_new_rule(copy: Path) -> None:
    """Its examples and fixtures (the copy's only fixtures) are collected and pass while they are
    pending; the generated docs are another test's business (they are stale until regenerated)."""
    tests = ["tests/test_dev016_my_rule_name.py", "tests/test_fixtures.py", "tests/test_rule_examples.py"]
    result = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests, "-k", "not current")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "failed" not in result.stdout and " passed" in result.stdout


def test_the_scaffold_refuses_a_code_or_a_name_in_use(copy: Path) -> None:
    taken = _run(copy, "scripts/new_rule.py", "DEV003", "another-name", "Something.")
    assert taken.returncode == 2 and "DEV003 already has a module" in taken.stderr
    taken = _run(copy, "scripts/new_rule.py", "DEV017", "model-placement", "Something.")
    assert taken.returncode == 2 and "model-placement is already DEV003" in taken.stderr
    bad = _run(copy, "scripts/new_rule.py", "DEV17", "Bad_Name", "Something.")
    assert bad.returncode == 2 and "DEV and three digits" in bad.stderr

"""The pre-commit hooks (.pre-commit-hooks.yaml), run as pre-commit runs them: the hook's
entry with the staged files' names appended, in the repository's root. pre-commit itself is
not a test dependency (it would build a virtual environment from the network for the hook);
this runs the entry the file declares, through `python -m devfix`, on a temporary git
repository."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BUGGY = "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(4, 2).cuda()\nprint(model(torch.ones(1, 4).cuda()))\n"


def _hooks():
    return {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def _staged_repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "legacy").mkdir(parents=True)
    (repo / "pyproject.toml").write_text('[tool.devfix]\nextend-exclude = ["legacy/"]\n')
    (repo / "train.py").write_text(BUGGY)
    (repo / "legacy" / "old.py").write_text(BUGGY)
    (repo / "README.md").write_text("not python\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    return repo


def _run_hook(hook: dict, repo: Path) -> subprocess.CompletedProcess:
    """The entry, with the staged files of the hook's types, as pre-commit calls it."""
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.split()
    suffixes = {"python": ".py", "pyi": ".pyi", "jupyter": ".ipynb"}
    wanted = tuple(suffixes[kind] for kind in hook["types_or"])
    files = [name for name in staged if name.endswith(wanted)]
    program, *arguments = shlex.split(hook["entry"])
    assert program == "devfix"
    return subprocess.run(
        [sys.executable, "-m", "devfix", *arguments, *hook.get("args", []), *files],
        cwd=repo,
        capture_output=True,
        text=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_check_hook_fails_on_staged_findings_and_respects_excludes(tmp_path):
    hook = _hooks()["devfix-check"]
    assert hook["language"] == "python" and hook["require_serial"] is True
    repo = _staged_repository(tmp_path)
    result = _run_hook(hook, repo)
    assert result.returncode == 1, result.stderr
    assert "train.py:4:9: DEV002" in result.stdout
    assert "legacy" not in result.stdout and "(1 file checked)" in result.stdout  # excluded even though named
    assert (repo / "train.py").read_text() == BUGGY


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_fix_hook_fixes_the_staged_files_in_place(tmp_path):
    repo = _staged_repository(tmp_path)
    result = _run_hook(_hooks()["devfix"], repo)
    assert result.returncode == 0, result.stdout + result.stderr  # everything fixed; pre-commit sees the change
    assert ".cuda()" not in (repo / "train.py").read_text()
    assert (repo / "legacy" / "old.py").read_text() == BUGGY
    again = _run_hook(_hooks()["devfix-check"], repo)
    assert again.returncode == 0, again.stdout

"""Which files a run looks at: the walk agrees with git on what `.gitignore` files ignore."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from devfix.files import discover

TREE = (
    "main.py",
    "README",
    "pytorch/main.py",
    "pytorch/utils.py",
    "pytorch/deep/model.py",
    "scripts/keep.py",
    "scripts/drop.py",
    "data/loader.py",
    "notebooks/a.ipynb",
)

CASES = {
    # audioset_tagging_cnn: ignore everything, then re-include folders and files with a suffix
    "allow-list": {".gitignore": "*\n!*/\n!*.*\n*.pyc\n"},
    "folder": {".gitignore": "data/\n"},
    "anchored-and-negated": {".gitignore": "/main.py\n*.py\n!utils.py\n"},
    # a deeper file re-includes what the root ignores, and ignores what the root keeps
    "nested": {".gitignore": "*.py\n", "scripts/.gitignore": "!keep.py\n", "pytorch/.gitignore": "deep/\n"},
    "folder-contents-but-one": {".gitignore": "pytorch/*\n!pytorch/deep/\n"},
    "double-star": {".gitignore": "**/model.py\nnotebooks/**\n"},
}


def _git_sees(root: Path) -> set[str]:
    listing = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    return {path for path in listing if path.endswith((".py", ".ipynb"))}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_walk_ignores_what_git_ignores(tmp_path: Path, case: str) -> None:
    for name in TREE:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import torch\n")
    for name, text in CASES[case].items():
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    found = {path.relative_to(tmp_path).as_posix() for path in discover([tmp_path])}
    assert found == _git_sees(tmp_path)
    assert found  # every case keeps something: a walk that drops all would pass against an empty git

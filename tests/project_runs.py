"""Checking a small project written into a folder, as `devfix check` checks a run: the files
analysed together. Shared by the tests of the project analysis."""

from __future__ import annotations

from pathlib import Path

from devfix.config import Config
from devfix.results import FileResult
from devfix.runner import process_project


def project_findings(root: Path, files: dict[str, str]) -> list[str]:
    """Write `files` into `root` (next to what is there), check every `*.py` under `root`
    together, and return the findings as `name:line CODE`."""
    for name, text in files.items():
        (root / name).write_text(text)
    reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted(root.rglob("*.py"))]
    return [
        f"{Path(r.path).name}:{d.line} {d.code}"
        for r in process_project(reads, Config(), fix=False)
        for d in r.diagnostics
    ]

"""`--jobs N`: the same findings, diff and order as `--jobs 1`, on a folder of multi-file projects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from devfix.analysis.project import ProjectFacts
from devfix.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The project fixtures, the notebooks and one rule's cases, as one run (a copy: the
    repository's own configuration excludes its fixtures)."""
    for name in ("projects", "notebooks", "DEV004"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(*args: str):
    """The command without the cache: each run analyses."""
    result = CliRunner().invoke(main, [*args, "--no-cache"], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [["check", "--output-format", "json"], ["check"], ["apply", "--diff"]])
def test_jobs_give_the_output_of_one_job(folder, command):
    one = _run(*command, "--jobs", "1", ".")
    assert one[0] in (1, 2) and one[1]  # something is found: the comparison means something
    for jobs in ("2", "3"):
        assert _run(*command, "--jobs", jobs, ".") == one


def test_apply_writes_the_same_files_whatever_the_jobs(folder, tmp_path):
    other = tmp_path.parent / (tmp_path.name + "_other")
    shutil.copytree(folder, other)
    _run("apply", "--jobs", "1", str(folder))
    _run("apply", "--jobs", "2", str(other))
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (other / path.relative_to(folder)).read_bytes(), path


def test_groups_partition_the_files_in_analysis_order(tmp_path):
    (tmp_path / "model.py").write_text("import torch\nclass Net(torch.nn.Module): pass\n")
    (tmp_path / "train.py").write_text("from model import Net\nimport utils\n")
    (tmp_path / "utils.py").write_text("x = 1\n")
    (tmp_path / "alone.py").write_text("import torch\n")
    files = [(str(p), p.read_bytes()) for p in sorted(tmp_path.iterdir())]  # alone, model, train, utils
    groups = ProjectFacts.from_files(files).groups(files)
    assert groups == [[0], [1, 3, 2]]


def test_the_text_scans_split_between_two_processes_are_the_scans_of_one(folder, monkeypatch):
    """The half of the run's text scans that another process reads (parallel.TextScans, from
    1 MB of Python on) gives the facts the whole scan in one process gives."""
    from devfix import parallel

    files = [(str(p), p.read_bytes()) for p in sorted(folder.rglob("*.py"))]
    alone = ProjectFacts.from_files(files)
    assert alone.unreferenced and alone.named_by and alone.methods  # the comparison means something
    monkeypatch.setattr(parallel, "_SCANS_APART_FROM", 0)
    scans = parallel.TextScans(files, jobs=2)
    assert scans._names is not None  # the split path runs
    split = scans.facts()
    for name in ("unreferenced", "named_by", "methods", "passed", "builds_cuda_on_import", "plain_gpu_tensors"):
        assert getattr(split, name) == getattr(alone, name), name

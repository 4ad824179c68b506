from __future__ import annotations

import pytest
from script_runner import shared_runner
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class PythonSnapshot(SingleFileSnapshotExtension):
    """One readable `.py` file per snapshot: a reviewer reads the fixed script itself."""

    file_extension = "py"
    _write_mode = WriteMode.TEXT


class FindingsSnapshot(SingleFileSnapshotExtension):
    """One `.txt` file per fixture: its findings, a line each, as `devfix check` prints them."""

    file_extension = "txt"
    _write_mode = WriteMode.TEXT


@pytest.fixture
def py_snapshot(snapshot):
    return snapshot.use_extension(PythonSnapshot)


@pytest.fixture
def findings_snapshot(snapshot):
    return snapshot.use_extension(FindingsSnapshot)


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def script_runner():
    return shared_runner()

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode


class PythonSnapshot(SingleFileSnapshotExtension):
    """One readable `.py` file per snapshot: a reviewer reads the fixed script itself."""

    file_extension = "py"
    _write_mode = WriteMode.TEXT


@pytest.fixture
def py_snapshot(snapshot):
    return snapshot.use_extension(PythonSnapshot)


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


class ScriptRunner:
    """Runs scripts through tests/forkserver.py: torch is imported once per test session."""

    def __init__(self) -> None:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
        root = str(Path(__file__).parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "forkserver.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )
        self.scratch = tempfile.mkdtemp(prefix="devfix-runs-")
        self.count = 0

    def run(self, argv, cwd, timeout: float = 120, env=None):
        """(returncode, output) of `python *argv` run in `cwd`."""
        self.count += 1
        output = os.path.join(self.scratch, f"{self.count}.log")
        request = {"argv": [str(a) for a in argv], "cwd": str(cwd), "output": output, "timeout": timeout, "env": env or {}}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        with open(output, encoding="utf-8", errors="replace") as stream:
            return reply["returncode"], stream.read()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


@pytest.fixture(scope="session")
def script_runner():
    runner = ScriptRunner()
    yield runner
    runner.close()

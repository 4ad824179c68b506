"""One fork server per test session (see tests/forkserver.py), shared by every test that
runs a script: the fixture tests through the `script_runner` fixture, the verify tests
through `verify_helpers.run_verify`."""

import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_SHARED = None


def shared_runner() -> "ScriptRunner":
    global _SHARED
    if _SHARED is None:
        _SHARED = ScriptRunner()
        atexit.register(_SHARED.close)
    return _SHARED


def _read(path):
    with open(path, encoding="utf-8", errors="replace") as stream:
        return stream.read()


class ScriptRunner:
    """Runs scripts through tests/forkserver.py: torch is imported once per test session."""

    def __init__(self) -> None:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0")
        root = str(Path(__file__).parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).parent / "forkserver.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.scratch = tempfile.mkdtemp(prefix="devfix-runs-")
        self.count = 0

    def run(self, argv, cwd, timeout: float = 120, env=None):
        """(returncode, output) of `python *argv` run in `cwd`, stdout and stderr together."""
        returncode, output, _ = self._request(argv, cwd, timeout, env, split=False)
        return returncode, output

    def run_split(self, argv, cwd, timeout: float = 120, env=None):
        """(returncode, stdout, stderr) of `python *argv` run in `cwd`."""
        return self._request(argv, cwd, timeout, env, split=True)

    def _request(self, argv, cwd, timeout, env, split):
        self.count += 1
        output = os.path.join(self.scratch, f"{self.count}.out")
        errors = os.path.join(self.scratch, f"{self.count}.err") if split else None
        request = {
            "argv": [str(a) for a in argv],
            "cwd": str(cwd),
            "output": output,
            "errors": errors,
            "timeout": timeout,
            "env": env or {},
        }
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        reply = json.loads(self.process.stdout.readline())
        return reply["returncode"], _read(output), _read(errors) if errors else ""

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


PROBE = Path(__file__).parent / "gpu_probe.py"


def run_with_probe(script: Path, *, cuda: bool, timeout: int = 120) -> subprocess.CompletedProcess:
    """Run `script` in a fresh interpreter under tests/gpu_probe.py, with the real CUDA
    device visible or hidden: the `gpu` tests need the hardware, not the fork server's
    CPU-only children."""
    env = dict(os.environ)
    if not cuda:
        env["CUDA_VISIBLE_DEVICES"] = ""
    env.setdefault("PYTHONHASHSEED", "0")
    return subprocess.run(
        [sys.executable, str(PROBE), str(script)],
        cwd=script.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def real_gpu_count() -> int:
    """CUDA devices this machine really has (the `gpu` tests skip what needs more)."""
    import torch

    return torch.cuda.device_count()

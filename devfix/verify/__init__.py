"""``devfix verify``: run a script on a simulated CUDA device, CPU only.

This package must stay importable without torch: ``run_script`` runs the
verifier in a subprocess, so patching never leaks into the caller.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["VerifyResult", "run_script"]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class VerifyResult:
    """Outcome of one verification run.

    ``verdict``: ok | device-error | script-error | unsupported | usage-error | timeout.
    ``report``: the JSON report as a dict (file, line, operation, devices, rule, ...).
    """

    verdict: str
    exit_code: int | None
    report: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == "ok"

    @property
    def rule(self) -> str | None:
        rule: str | None = self.report.get("rule")
        return rule

    @property
    def line(self) -> int | None:
        line: int | None = self.report.get("line")
        return line


def run_script(
    path: str | os.PathLike[str] | None = None,
    args: Iterable[object] = (),
    cpu_only_load: bool = False,
    timeout: float = 60,
    python: str | None = None,
    cwd: str | None = None,
    devices: int = 1,
    module: str | None = None,
) -> VerifyResult:
    """Verify ``path`` (a script, or a project folder: its entry script) in a fresh
    interpreter on `devices` simulated GPUs and return its verdict. With `module`,
    run ``python -m module`` from `cwd` instead."""
    cmd = [python or sys.executable, "-m", "devfix.verify", "--json"]
    if cpu_only_load:
        cmd.append("--cpu-only-load")
    if devices != 1:
        cmd += ["--devices", str(devices)]
    if module:
        cmd += ["-m", module, *map(str, args)]
        cwd = cwd or os.getcwd()
    else:
        if path is None:
            raise TypeError("run_script needs a path or a module")
        script = os.fspath(path)
        cmd += [script, *map(str, args)]
        if cwd is None:
            cwd = script if os.path.isdir(script) else os.path.dirname(os.path.abspath(script))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return VerifyResult("timeout", None, {}, _text(e.stdout), _text(e.stderr))
    report: dict[str, Any] = {}
    for line in reversed(proc.stdout.strip().splitlines()):
        try:
            report = json.loads(line)
            break
        except ValueError:
            continue
    verdict = report.get("verdict") or ("usage-error" if proc.returncode == 2 else "script-error")
    return VerifyResult(verdict, proc.returncode, report, proc.stdout, proc.stderr)


def _text(b: str | bytes | None) -> str:
    if b is None:
        return ""
    return b.decode(errors="replace") if isinstance(b, bytes) else b

"""Shared helpers of the verify tests (a plain module: test files import it)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")


def bug_line(name):
    """Line of the script marked with '# BUG-LINE' (where the devices meet)."""
    with open(os.path.join(SCRIPTS, name), encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if "# BUG-LINE" in line:
                return no
    raise AssertionError(f"{name} has no BUG-LINE marker")


def run_verify(*argv, env_extra=None, timeout=120):
    """Run ``python -m devfix.verify ARGV`` in a child process (no patch leaks here).

    The child is forked from the test session's fork server, which imported torch once
    (tests/forkserver.py); with `env_extra` it is a fresh interpreter instead.
    """
    if env_extra is None:
        from script_runner import shared_runner

        code, out, err = shared_runner().run_split(["-m", "devfix.verify", *argv], cwd=SCRIPTS, timeout=timeout)
        return subprocess.CompletedProcess(["devfix", "verify", *argv], code, out, err)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "devfix.verify", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=SCRIPTS,
    )

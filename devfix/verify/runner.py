"""Run one script (or a project's entry script, or ``-m module``) under the
simulated devices and report: the command's body.

Imports torch only inside ``run`` (or opportunistically at import, see below) so
that ``devfix verify`` can say clearly that PyTorch is missing instead of
failing at import time.
"""

from __future__ import annotations

import contextlib
import runpy
import sys
import time

from devfix.verify import project
from devfix.verify.report import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Result

TORCH_MISSING = "devfix verify needs PyTorch: pip install 'devfix[verify]'"

try:  # a process that imports the runner ahead of forking (a fork server) pays this once
    from devfix.verify import simulator as _simulator  # noqa: F401
except ImportError:  # no torch: `run` says so
    pass


def run(script: str | None, args=(), as_json: bool = False, cpu_only_load: bool = False,
        devices: int = 1, module: str | None = None) -> int:
    """Run SCRIPT like ``python SCRIPT ARGS`` (a folder: its entry script; `module`:
    like ``python -m MODULE ARGS``) on `devices` simulated GPUs; print the report
    (text, or one JSON object on stdout with ``as_json``); return the exit code
    (0 clean, 1 device bug or script error, 2 usage, 3 unsupported)."""
    try:
        entry = project.resolve(script, module)
    except project.UsageError as e:
        return _emit(Result("usage-error", EXIT_USAGE, message=str(e), gpus=devices), as_json)
    try:
        import torch  # noqa: F401
    except ImportError:
        if as_json:
            return _emit(Result("usage-error", EXIT_USAGE, message=TORCH_MISSING), True)
        print(TORCH_MISSING, file=sys.stderr)
        return EXIT_USAGE
    from devfix.verify import report, simulator

    state = simulator.State(entry.path, cpu_only_load, devices=devices, root=entry.root)
    sys.argv = [entry.argv0, *args]
    sys.path[0:0] = entry.sys_path
    exc = None
    exit_status = 0
    start = time.perf_counter()
    # with --json the script's own prints go to stderr: stdout holds one JSON object
    out = contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
    with out:
        try:
            with simulator.activate(state):
                if entry.module:
                    runpy.run_module(entry.module, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(entry.path, run_name="__main__")
        except SystemExit as e:
            exit_status = e.code
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # includes simulator.Unsupported
            exc = e
        finally:
            sys.stdout.flush()
    seconds = time.perf_counter() - start
    n = state.tensors_on_device
    if isinstance(exc, simulator.Unsupported) and state.first is None:
        state.record(simulator.Event("unsupported", exc.feature))
        uf = report.last_user_frame(exc, state.is_user_file)
        state.first.file, state.first.line = uf
    if state.first is not None:
        res = report.from_event(state.first, exc, state.is_user_file, n, seconds)
    elif exc is not None:
        res = report.from_exception(exc, state.is_user_file, n, seconds)
    elif exit_status not in (0, None):
        res = Result("script-error", EXIT_FAIL, message=f"the script exited with status {exit_status}",
                     tensors_on_device=n, seconds=seconds)
    else:
        res = Result("ok", EXIT_OK, tensors_on_device=n, seconds=seconds)
    res.gpus = devices
    return _emit(res, as_json)


def _emit(res: Result, as_json: bool) -> int:
    if as_json:
        print(res.to_json())
    else:
        print(res.to_text())
    sys.stdout.flush()
    return res.exit_code

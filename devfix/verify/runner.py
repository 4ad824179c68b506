"""Run one script (or a project's entry script, or ``-m module``) under the
simulated devices and report: the command's body.

Imports torch only inside ``run`` (or opportunistically at import, see below) so
that ``devfix verify`` can say clearly that PyTorch is missing instead of
failing at import time.
"""

from __future__ import annotations
import __future__

import builtins
import contextlib
import functools
import linecache
import operator
import os
import runpy
import sys
import time
from collections.abc import Sequence

from devfix import notebooks
from devfix.verify import project
from devfix.verify.report import EXIT_FAIL, EXIT_OK, EXIT_USAGE, Result, show_path

TORCH_MISSING = "devfix verify needs PyTorch: pip install 'devfix[verify]'"

try:  # a process that imports the runner ahead of forking (a fork server) pays this once
    from devfix.verify import simulator as _simulator  # noqa: F401
except ImportError:  # no torch: `run` says so
    pass


def run(
    script: str | None,
    args: Sequence[str] = (),
    as_json: bool = False,
    cpu_only_load: bool = False,
    devices: int = 1,
    module: str | None = None,
) -> int:
    """Run SCRIPT like ``python SCRIPT ARGS`` (a folder: its entry script; `module`:
    like ``python -m MODULE ARGS``) on `devices` simulated GPUs; print the report
    (text, or one JSON object on stdout with ``as_json``); return the exit code
    (0 clean, 1 device bug or script error, 2 usage, 3 unsupported)."""
    try:
        entry = project.resolve(script, module)
        notebook = _notebook(entry.path) if entry.path and notebooks.is_notebook(entry.path) else None
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
    exc: BaseException | None = None
    exit_status: str | int | None = 0
    start = time.perf_counter()
    # with --json the script's own prints go to stderr: stdout holds one JSON object
    out = contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext()
    with out:
        try:
            with simulator.activate(state):
                if entry.module:
                    runpy.run_module(entry.module, run_name="__main__", alter_sys=True)
                elif entry.path is not None:  # not a module: a script (resolve gives one or the other)
                    if notebook is not None:
                        _run_cells(entry.path, notebook)
                    else:
                        runpy.run_path(entry.path, run_name="__main__")
        except SystemExit as e:
            exit_status = e.code
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the script's own error is the verdict (includes simulator.Unsupported)
            exc = e
        finally:
            sys.stdout.flush()
    seconds = time.perf_counter() - start
    n = state.tensors_on_device
    if isinstance(exc, simulator.Unsupported) and state.first is None:
        event = simulator.Event("unsupported", exc.feature)
        event.file, event.line = report.last_user_frame(exc, state.is_user_file)
        state.record(event)
    if state.first is not None:
        res = report.from_event(state.first, exc, state.is_user_file, n, seconds)
    elif exc is not None:
        res = report.from_exception(exc, state.is_user_file, n, seconds)
    elif exit_status not in (0, None):
        res = Result(
            "script-error",
            EXIT_FAIL,
            message=f"the script exited with status {exit_status}",
            tensors_on_device=n,
            seconds=seconds,
        )
    else:
        res = Result("ok", EXIT_OK, tensors_on_device=n, seconds=seconds)
    res.gpus = devices
    if notebook is not None and entry.path is not None:
        _in_cells(res, entry.path, notebook)
    return _emit(res, as_json)


def _notebook(path: str) -> notebooks.Notebook:
    """The notebook's code cells as one program; a notebook that cannot be read, or a cell
    that cannot be parsed, is a usage error: verify runs every cell or none."""
    try:
        with open(path, "rb") as handle:
            notebook = notebooks.read(handle.read())
    except (OSError, notebooks.NotebookError) as e:
        raise project.UsageError(f"{show_path(path)}: {e}") from None
    unparsed = notebook.unparsed()
    if unparsed:
        cell, why = unparsed[0]
        raise project.UsageError(
            f"{show_path(path)}:cell {cell}: {why}; verify runs every code cell, so it cannot run this notebook"
        )
    return notebook


def _run_cells(path: str, notebook: notebooks.Notebook) -> None:
    """Run the code cells in order in one namespace, as a kernel does: each cell compiled on
    its own (a `from __future__` import may open any cell) and keeping the future features of
    the cells before it. IPython lines stand as `pass` (a shell command or `%matplotlib` does
    not place tensors). Cells are compiled under the notebook's own path at their lines in the
    program, so the simulator reads them as the user's code, and the lines are registered for
    tracebacks."""
    program = notebooks.lines(notebook.program)
    linecache.cache[path] = (len(notebook.program), None, program, path)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    flags = 0
    for start, end in _cell_ranges(notebook):
        code = compile("\n" * start + "".join(program[start:end]), path, "exec", flags=flags, dont_inherit=True)
        flags |= code.co_flags & _FUTURE_FLAGS
        exec(code, namespace)


_FUTURE_FLAGS = functools.reduce(
    operator.or_, (getattr(__future__, name).compiler_flag for name in __future__.all_feature_names), 0
)


def _cell_ranges(notebook: notebooks.Notebook) -> list[tuple[int, int]]:
    """(first, end) program lines (0-based, end excluded) of each cell's code."""
    ranges: list[list[int]] = []
    for index, (_cell, line) in enumerate(notebook.where):
        if line == 0:
            ranges.append([index + 1, index + 1])
        else:
            ranges[-1][1] = index + 1
    return [(start, end) for start, end in ranges if end > start]


def _in_cells(res: Result, path: str, notebook: notebooks.Notebook) -> None:
    """The report's lines of the notebook given as cell and line in the cell."""
    if res.file and os.path.abspath(res.file) == os.path.abspath(path) and res.line:
        res.cell, res.line = notebook.position(res.line)
    shown = show_path(path)
    mapped = []
    for where in res.called_from:
        name, _, line = where.rpartition(":")
        if name == shown and line.isdigit():
            cell, line_in_cell = notebook.position(int(line))
            where = f"{name}:cell {cell}:{line_in_cell}"
        mapped.append(where)
    res.called_from = mapped


def _emit(res: Result, as_json: bool) -> int:
    if as_json:
        print(res.to_json())
    else:
        print(res.to_text())
    sys.stdout.flush()
    return res.exit_code

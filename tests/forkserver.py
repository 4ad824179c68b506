"""Run many short Python programs fast: import torch once, fork a child per program.

Each test that runs a script (the fixed fixtures, `devfix verify` on them) would otherwise
pay for a fresh interpreter importing torch, about 1.5 s. The server imports torch (and
devfix) once and forks a child per request; the child runs the program as `__main__`
(a script path, or `-m module`) with its own argv and working directory, its output going
to a file. Forking after importing torch is safe as long as the parent runs no torch
operation, which it never does. Protocol: one JSON request per line on stdin, one JSON
reply per line on stdout.
"""

import json
import os
import runpy
import signal
import sys
import time
import traceback


def _child(request) -> None:
    out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    errors = request.get("errors")
    os.dup2(os.open(errors, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if errors else out, 2)
    os.chdir(request["cwd"])
    os.environ.update(request.get("env", {}))
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        _keep_cuda_hidden()
    argv = request["argv"]
    code = 0
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if not isinstance(done.code, (int, type(None))):
            print(done.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - report like the interpreter would
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _keep_cuda_hidden() -> None:
    """Make the child a machine without CUDA for good, as CI's machines are.

    The runner hides the GPUs with CUDA_VISIBLE_DEVICES="", but a script may set that
    variable itself before CUDA starts (GraphRNN's scripts pick their GPU so), and on a GPU
    machine its "CPU-only" run would then use the GPU. CUDA starts through
    `torch.cuda._lazy_init` (tensor and module `.cuda()` call it too): make it fail as it does
    on a build without CUDA, and report no device. `devfix verify` patches these for its
    simulated GPU and puts these back afterwards. A CPU build needs none of it.
    """
    import torch

    if torch.version.cuda is None:
        return

    def no_cuda(*args, **kwargs):
        raise AssertionError("Torch not compiled with CUDA enabled")

    torch.cuda._lazy_init = no_cuda
    torch.cuda.is_available = lambda: False
    torch.cuda.device_count = lambda: 0


def _wait(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return 124
        time.sleep(0.01)


def serve() -> None:
    import torch  # noqa: F401 - the point of the server: imported once, shared by every child

    import devfix.engine  # preloaded too, so forked children start fast
    import devfix.verify.runner  # noqa: F401

    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        code = _wait(pid, request.get("timeout", 120))
        sys.stdout.write(json.dumps({"returncode": code}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()

"""The ``devfix verify`` click command.

Must not import torch (plain ``devfix`` does not need it): the runner is
imported inside the command body, and it imports torch only when it runs.
"""

from __future__ import annotations

import click


@click.command(
    "verify",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option(
    "--cpu-only-load",
    is_flag=True,
    help="Make torch.load of CUDA tensors without map_location fail as on a CPU-only machine.",
)
@click.option(
    "--devices",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    metavar="N",
    help="Simulate N GPUs (cuda:0 ... cuda:N-1), for cuda:1, DataParallel and model parallelism.",
)
@click.option(
    "-m",
    "module",
    metavar="MODULE",
    help="Run a module like python -m MODULE, the current directory being the project root; "
    "everything after MODULE goes to it.",
)
@click.argument("script", required=False, type=click.Path())
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def verify_command(
    as_json: bool, cpu_only_load: bool, devices: int, module: str | None, script: str | None, args: tuple[str, ...]
) -> None:
    """Run SCRIPT [ARGS] as if CUDA devices existed (all work stays on the CPU)
    and report the first place where tensors on different devices meet.

    SCRIPT may be a project folder: its train.py, main.py or __main__.py (or its
    one script with `if __name__ == "__main__":`) runs, and every file under the
    folder is the user's code.

    Exit codes: 0 clean, 1 device bug or script error, 2 usage error or
    PyTorch missing, 3 the script uses a feature the simulation does not model.
    """
    from devfix.verify.runner import run

    if module:  # `-m pkg.train --epochs 1`: what click took for SCRIPT is the module's first argument
        args = ((script,) if script is not None else ()) + tuple(args)
        script = None
    raise SystemExit(run(script, args, as_json=as_json, cpu_only_load=cpu_only_load, devices=devices, module=module))

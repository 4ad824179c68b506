"""Run every file devfix changes in the evaluated repositories, before and after the fix.

    python eval/run_changed.py --repos DIR [--set SET|all] [--timeout 60]

For each repository of eval/repos.toml checked out under DIR, devfix's fixes are applied to
a scratch copy; then each changed file is run as a script from its own folder, with no GPU
(`CUDA_VISIBLE_DEVICES=""`): the original, the fixed file, and the fixed file under
`devfix verify` (a simulated GPU, with `--cpu-only-load`). A file is

- `broken`  when the original runs and the fixed file does not (an edit broke it), or the
            original passes `devfix verify` and the fixed file fails it (broken on a GPU);
- `fixed`   when the original fails, the fixed file runs, and verify passes;
- `runs`    when both run (and verify says whether the fixed file is right on a GPU);
            a script still training at the time limit counts as running;
- `fixed, then fails for another reason` when the original fails on a device error and the
  fixed file gets past it, then fails on something else (old PyTorch APIs, missing data);
- `cannot run here` when the original and the fixed file fail the same way for a reason that
  is not a device (a dataset to download, a package not installed, a missing file).

Downloadable datasets are replaced by small random ones of the same shape (eval/offline/),
so tutorial scripts run here. Nothing is written to the checkouts. The exit code is 1 when any edit broke a file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from devfix.analysis.project import ProjectFacts  # noqa: E402
from devfix.config import Config  # noqa: E402
from devfix.engine import process_source  # noqa: E402
from devfix.files import discover  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

OFFLINE = HERE / "offline"  # sitecustomize: small random stand-ins for MNIST, CIFAR... (no downloads here)
DEVICE_WORDS = ("cuda", "device", "CUDA", "NVIDIA", "GPU", "map_location", "pin")


def run(script: Path, timeout: int, verify: bool = False) -> tuple:
    """(exit code, last line of output) of `python script` (or `devfix verify script`)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(OFFLINE), env.get("PYTHONPATH", "")) if p)
    command = (
        [sys.executable, "-m", "devfix.verify", "--cpu-only-load", str(script)]
        if verify
        else [sys.executable, str(script)]
    )
    try:
        result = subprocess.run(
            command,
            cwd=script.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    lines = (result.stdout + result.stderr).strip().splitlines()
    return result.returncode, lines[-1][:200] if lines else ""


def changed_files(checkout: Path):
    """(relative path, fixed bytes) for every file devfix would change."""
    config = Config(root=checkout)
    sources = [(path, path.read_bytes()) for path in discover([checkout])]
    project = ProjectFacts.from_files([(str(path), source) for path, source in sources])
    for path, source in sources:
        result = process_source(source, config, fix=True, path=str(path), project=project)
        if result.changed:
            yield path.relative_to(checkout), result.new


def ran(result: tuple) -> bool:
    """Ran cleanly, or was still running at the time limit (a long training loop)."""
    return result[0] in (0, "timeout")


def classify(original: tuple, fixed: tuple, verified: tuple, verified_before: tuple) -> str:
    """What the edits did to one file, on the CPU and on the simulated GPU."""
    if ran(original) and not ran(fixed):
        return "broken: " + fixed[1]
    if ran(verified_before) and not ran(verified):
        return "broken on the simulated GPU: " + verified[1]
    if not ran(original) and ran(fixed):
        return "fixed" if ran(verified) else "fixed on CPU, verify: " + verified[1]
    if ran(original) and ran(fixed):
        if ran(verified):
            return "runs" + (", verify: fixed" if verified_before[0] != "-" and not ran(verified_before) else "")
        return "runs, verify: " + verified[1]
    device_failure = [any(word in result[1] for word in DEVICE_WORDS) for result in (original, fixed)]
    if device_failure == [False, True] or (device_failure == [True, True] and fixed[1] != original[1]):
        return "broken? " + fixed[1]
    if device_failure == [True, False]:
        return "fixed, then fails for another reason: " + fixed[1]
    return "cannot run here: " + original[1]


def set_names() -> list[str]:
    """The sets named in eval/repos.toml, and "all": a new blind set needs no code change."""
    repositories = tomllib.loads((HERE / "repos.toml").read_text(encoding="utf-8"))["repo"]
    return [*sorted({r["set"] for r in repositories}), "all"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--set", choices=set_names(), default="all")
    parser.add_argument("--timeout", type=int, default=60)
    options = parser.parse_args()
    repositories = tomllib.loads((HERE / "repos.toml").read_text(encoding="utf-8"))["repo"]
    broken = 0
    for repo in repositories:
        if options.set not in ("all", repo["set"]) or not (options.repos / repo["name"]).is_dir():
            continue
        checkout = options.repos / repo["name"]
        changes = list(changed_files(checkout))
        if not changes:
            continue
        with tempfile.TemporaryDirectory(prefix="devfix-run-") as scratch:
            before = Path(scratch) / "before"
            after = Path(scratch) / "after"
            shutil.copytree(checkout, before, symlinks=True)
            shutil.copytree(checkout, after, symlinks=True)
            for relative, new in changes:
                (after / relative).write_bytes(new)
            for relative, _ in changes:
                original = run(before / relative, options.timeout)
                fixed = run(after / relative, options.timeout)
                verified = run(after / relative, options.timeout, verify=True) if ran(fixed) else ("-", "")
                verified_before = (
                    run(before / relative, options.timeout, verify=True)
                    if ran(original) and verified[0] != "-"
                    else ("-", "")
                )
                verdict = classify(original, fixed, verified, verified_before)
                broken += verdict.startswith("broken")
                print(f"{repo['name']}/{relative}: {verdict}")
    print(f"files broken by an edit: {broken}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

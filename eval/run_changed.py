"""Run every file devfix changes in the evaluated repositories, before and after the fix.

    python eval/run_changed.py --repos DIR [--set dev|heldout|all] [--timeout 60]

For each repository of eval/repos.toml checked out under DIR, devfix's fixes are applied to
a scratch copy; then each changed file is run as a script from its own folder, with no GPU
(`CUDA_VISIBLE_DEVICES=""`): the original, the fixed file, and the fixed file under
`devfix verify` (a simulated GPU, with `--cpu-only-load`). A file is

- `broken`  when the original runs and the fixed file does not (an edit broke it);
- `fixed`   when the original fails, the fixed file runs, and verify passes;
- `runs`    when both run (and verify says whether the fixed file is right on a GPU);
- `cannot run here` when the original and the fixed file fail the same way for a reason that
  is not a device (a dataset to download, a package not installed, a missing file).

Nothing is written to the checkouts. The exit code is 1 when any edit broke a file.
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

from devfix.config import Config  # noqa: E402
from devfix.engine import process_source  # noqa: E402
from devfix.files import discover  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEVICE_WORDS = ("cuda", "device", "CUDA", "same device", "map_location", "pin")


def run(script: Path, timeout: int, verify: bool = False) -> tuple:
    """(exit code, last line of output) of `python script` (or `devfix verify script`)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONHASHSEED="0", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "devfix.verify", "--cpu-only-load", str(script)] if verify else [sys.executable, str(script)]
    try:
        result = subprocess.run(command, cwd=script.parent, env=env, capture_output=True, text=True, timeout=timeout,
                                stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    lines = (result.stdout + result.stderr).strip().splitlines()
    return result.returncode, lines[-1][:200] if lines else ""


def changed_files(checkout: Path):
    """(relative path, fixed bytes) for every file devfix would change."""
    config = Config(root=checkout)
    for path in discover([checkout]):
        source = path.read_bytes()
        result = process_source(source, config, fix=True, path=str(path))
        if result.changed:
            yield path.relative_to(checkout), result.new


def classify(original: tuple, fixed: tuple, verified: tuple) -> str:
    if original[0] == "timeout" and fixed[0] == "timeout":
        return "runs (long)"
    if original[0] == 0 and fixed[0] != 0:
        return "broken"
    if original[0] != 0 and fixed[0] == 0:
        return "fixed" if verified[0] == 0 else "fixed on CPU, verify: " + verified[1]
    if original[0] == 0 and fixed[0] == 0:
        return "runs" if verified[0] in (0, "timeout") else "runs, verify: " + verified[1]
    if any(word in fixed[1] for word in DEVICE_WORDS) and fixed[1] != original[1]:
        return "broken? " + fixed[1]
    return "cannot run here: " + original[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--set", choices=("dev", "heldout", "all"), default="all")
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
                verified = run(after / relative, options.timeout, verify=True) if fixed[0] == 0 or original[0] != 0 else ("-", "")
                verdict = classify(original, fixed, verified)
                broken += verdict.startswith("broken")
                print(f"{repo['name']}/{relative}: {verdict}")
    print(f"files broken by an edit: {broken}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

"""What devfix costs on a whole repository, against the parse floor, in one run.

    python benchmarks/bench.py                       # seeded corpus at 100, 1,000 and 10,000 files
    python benchmarks/bench.py --sizes 100,1000      # fewer sizes
    python benchmarks/bench.py --dir ~/src/examples  # any directory instead of the corpus

The corpus (benchmarks/corpus.py, seeded: the same bytes everywhere) has `clean/` torch files
in the style of the official examples (devfix finds nothing), `buggy/` torch files (devfix
fixes them), and `plain/` Python without torch, so that a third of the files import torch.

Every devfix figure is the `devfix` command line run in a fresh process (interpreter start
included), and so is the floor: a process that reads the same files and calls
`libcst.parse_module` on each. The ratios of one-process runs compare CPU seconds (user +
system, from `wait4`), which hold on a machine other work shares; the `--jobs` speed-up and
the cache compare wall-clock seconds. Each run is the best of a few (at 100 files) or one;
peak memory is the largest resident set of the process or of any worker.
The figures to read are the ratios; each target of the performance issue is printed beside
its ratio. `--jobs`/`--no-cache` are passed only when the installed devfix has them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402 - the generator beside this script

PYTHON = sys.executable


def python_files(roots: Sequence[Path]) -> list[Path]:
    return sorted(p for root in roots for p in ([root] if root.is_file() else root.rglob("*.py")))


# -- the floors, run in their own process: `bench.py --floor parse|metadata|scan DIR...` ------------
def floor(kind: str, roots: Sequence[Path]) -> None:
    import libcst as cst

    files = [(str(path), path.read_bytes()) for path in python_files(roots)]
    start = time.perf_counter()
    if kind == "parse":
        for _, data in files:
            cst.parse_module(data)
    elif kind == "metadata":
        from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

        for _, data in files:
            wrapper = MetadataWrapper(cst.parse_module(data))
            wrapper.resolve_many([ParentNodeProvider, PositionProvider, ScopeProvider])
    elif kind == "scan":
        # devfix's text scan of the run (project index, callers, GPU choices) and the
        # pre-filter that rules files out before any parse
        from devfix.analysis.project import ProjectFacts
        from devfix.engine import FileResult, _may_matter

        project = ProjectFacts.from_files(files)
        scanned = time.perf_counter()
        for path, data in files:
            _may_matter(FileResult(path, data, data), project)
        print(f"filter {time.perf_counter() - scanned:.6f}")
    print(f"seconds {time.perf_counter() - start:.6f}")  # the work alone, without start-up and reading


# -- measuring a command -------------------------------------------------------------------------------
class Run:
    def __init__(self, wall: float, cpu: float, rss_mb: float, rc: int, said: dict[str, float]) -> None:
        self.wall, self.cpu, self.rss_mb, self.rc, self.said = wall, cpu, rss_mb, rc, said


def measure(argv: list[str], cwd: Path, repeat: int = 1, before=None) -> Run:
    """The best wall time of `repeat` runs of `argv` (with its CPU time and peak memory)."""
    best: Run | None = None
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err)
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - start
            process.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            error = err.read().decode(errors="replace")
            out.seek(0)
            said = {
                line.split()[0]: float(line.split()[1])
                for line in out.read().decode(errors="replace").splitlines()
                if len(line.split()) == 2 and line.split()[0] in ("seconds", "filter")
            }
        if process.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}):\n{error[-2000:]}")
        run = Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, process.returncode, said)
        if best is None or run.wall < best.wall:
            best = run
    assert best is not None
    return best


def devfix_options() -> tuple[bool, bool]:
    """(has --jobs, has --no-cache): the benchmark also runs against older devfix versions."""
    text = subprocess.run([PYTHON, "-m", "devfix", "check", "--help"], capture_output=True, text=True).stdout
    return "--jobs" in text, "--no-cache" in text


class Bench:
    def __init__(self, root: Path, repeat: int) -> None:
        self.root = root
        self.repeat = repeat
        self.has_jobs, self.has_cache = devfix_options()
        # outside the measured folder: `--dir` may be someone's checkout
        self.cache_dir = (
            Path(tempfile.gettempdir()) / f"devfix-bench-cache-{os.getpid()}-{id(self)}"
        )  # made by devfix if used

    def floor(self, kind: str, *paths: str) -> Run:
        return measure([PYTHON, str(HERE / "bench.py"), "--floor", kind, *paths], self.root, self.repeat)

    def devfix(self, command: str, *paths: str, jobs: int | None = 1, cache: bool = False, clear: bool = True) -> Run:
        argv = [PYTHON, "-m", "devfix", *command.split(), "-q", "--exit-zero", *paths]
        if self.has_jobs and jobs is not None:
            argv += ["--jobs", str(jobs)]
        if self.has_cache:
            argv += ["--cache-dir", str(self.cache_dir)] if cache else ["--no-cache"]
        before = self.clear_cache if cache and clear else None
        return measure(argv, self.root, self.repeat, before)

    def clear_cache(self) -> None:
        shutil.rmtree(self.cache_dir, ignore_errors=True)


def count_lines(roots: Sequence[Path]) -> tuple[int, int]:
    files = python_files(roots)
    return len(files), sum(path.read_bytes().count(b"\n") for path in files)


def corpus_rows(bench: Bench, size: int, full: bool) -> list[tuple[str, str, str]]:
    """(measure, value, target) rows for one generated corpus; without `full`, only those
    that show how the cost of a whole run grows (a 10,000-file corpus)."""
    rows: list[tuple[str, str, str]] = []
    torch_dirs = ("clean", "buggy")
    n_files, n_lines = count_lines([bench.root])
    n_torch, _ = count_lines([bench.root / d for d in torch_dirs])
    rows.append(("files (torch files) / lines", f"{n_files} ({n_torch}) / {n_lines}", ""))
    parse_all = bench.floor("parse", ".")
    rows.append(("plain parse, all files (CPU s, process start included)", f"{parse_all.cpu:.2f} s", "the floor"))
    if full:
        parse_clean = bench.floor("parse", "clean")
        parse_buggy = bench.floor("parse", "buggy")
        meta = bench.floor("metadata", "clean")
        rows.append(
            (
                "parse + LibCST metadata (parent, position, scope) / parse, clean files",
                _x(meta.cpu, parse_clean.cpu),
                "",
            )
        )
        check_clean = bench.devfix("check", "clean")
        rows.append(
            (
                "`check --jobs 1` / parse, clean torch files (nothing found)",
                _x(check_clean.cpu, parse_clean.cpu),
                "<= 2x",
            )
        )
        check_buggy = bench.devfix("check", "buggy")
        apply_buggy = bench.devfix("apply --diff", "buggy")
        rows.append(
            ("`apply --diff --jobs 1` / parse, buggy torch files", _x(apply_buggy.cpu, parse_buggy.cpu), "<= 3x")
        )
        rows.append(("`apply --diff` / `check`, buggy torch files", _x(apply_buggy.cpu, check_buggy.cpu), "<= 1.5x"))
        check_torch = bench.devfix("check", *torch_dirs)
    check_all = bench.devfix("check", ".")
    if full:
        rows.append(
            ("`check --jobs 1`, all files / the torch files alone", _x(check_all.cpu, check_torch.cpu), "<= 1.2x")
        )
        scan = bench.floor("scan", ".")
        rows.append(
            (
                "pre-filter test / parse, all files (in-process work)",
                _x(scan.said.get("filter", 0), parse_all.said.get("seconds", 0)),
                "<= 0.05x",
            )
        )
        rows.append(
            (
                "pre-filter test + the project's text scans / parse, all files (in-process)",
                _x(scan.said.get("seconds", 0), parse_all.said.get("seconds", 0)),
                "",
            )
        )
    rows += _jobs_and_cache_rows(
        bench,
        check_all.wall,
        "`check --jobs 2` speed-up over `--jobs 1`, all files",
        "`check`, cached re-run / cold run (unchanged files, default jobs)",
        cold_wall=True,
    )
    rows.append(
        (
            "`check --jobs 1`, all files: CPU s, files/s, ms per file",
            f"{check_all.cpu:.2f} s, {n_files / check_all.cpu:.0f}, {1000 * check_all.cpu / n_files:.2f}",
            "linear",
        )
    )
    rows.append(("`check --jobs 1`, all files: peak memory", f"{check_all.rss_mb:.0f} MB", "flat"))
    return rows


def _jobs_and_cache_rows(
    bench: Bench, one_job_wall: float, jobs_label: str, cache_label: str, cold_wall: bool = False
) -> list[tuple[str, str, str]]:
    """`--jobs 2` against the `--jobs 1` run already timed, and a cached re-run against a cold one."""
    rows: list[tuple[str, str, str]] = []
    if bench.has_jobs:
        two = bench.devfix("check", ".", jobs=2)
        rows.append((jobs_label, f"{one_job_wall / two.wall:.2f}x", ">= 1.7x (2 cores)"))
    if bench.has_cache:
        cold = bench.devfix("check", ".", jobs=None, cache=True)
        warm = bench.devfix("check", ".", jobs=None, cache=True, clear=False)
        bench.clear_cache()
        rows.append((cache_label, _x(warm.wall, cold.wall), "<= 0.1x"))
        if cold_wall:
            rows.append(("`check`, cold run with the cache (default jobs): wall s", f"{cold.wall:.2f} s", ""))
    return rows


def directory_rows(bench: Bench) -> list[tuple[str, str, str]]:
    """(measure, value, target) rows for a directory given with --dir."""
    n_files, n_lines = count_lines([bench.root])
    parse = bench.floor("parse", ".")
    meta = bench.floor("metadata", ".")
    check = bench.devfix("check", ".")
    apply = bench.devfix("apply --diff", ".")
    rows = [
        ("files / lines", f"{n_files} / {n_lines}", ""),
        ("plain parse (CPU s)", f"{parse.cpu:.2f} s", "the floor"),
        ("parse + LibCST metadata / parse", _x(meta.cpu, parse.cpu), ""),
        ("check --jobs 1 / parse", _x(check.cpu, parse.cpu), ""),
        ("apply --diff --jobs 1 / parse", _x(apply.cpu, parse.cpu), ""),
        ("apply --diff / check", _x(apply.cpu, check.cpu), "<= 1.5x"),
    ]
    rows += _jobs_and_cache_rows(bench, check.wall, "check --jobs 2 speed-up over --jobs 1", "cached re-run / cold run")
    rows.append(("check --jobs 1: peak memory", f"{check.rss_mb:.0f} MB", ""))
    return rows


def linearity_rows(work: Path, sizes: Sequence[int]) -> list[tuple[str, str, str]]:
    """One generated file of N small functions, each with one hard-coded `.cuda()`: CPU
    seconds of `check` per function must stay flat as N grows."""
    rows = []
    first: float | None = None
    for n in sizes:
        folder = work / f"functions_{n}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = ["import torch", ""]
        for i in range(n):
            lines += [f"def f{i}(x):", "    y = torch.zeros(3).cuda()", "    return x + y", ""]
        lines += ["if __name__ == '__main__':"] + [f"    f{i}(torch.ones(3))" for i in range(n)]
        (folder / "many.py").write_text("\n".join(lines) + "\n")
        bench = Bench(folder, 1)
        run = bench.devfix("check", "many.py")
        per = 1000 * run.cpu / n
        first = first or per
        rows.append(
            (
                f"one file of {n} functions with .cuda(): check CPU",
                f"{run.cpu:.2f} s ({per:.2f} ms/function)",
                f"{per / first:.2f}x the first per function",
            )
        )
    return rows


def _x(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "n/a"


def table(title: str, rows: list[tuple[str, str, str]]) -> str:
    lines = [f"### {title}", "", "| measure | value | target |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="corpus sizes in files (comma-separated)")
    parser.add_argument("--dir", type=Path, default=None, help="benchmark this directory instead of the corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--functions", default="500,1000,2000,5000", help="sizes of the one-file linearity test")
    parser.add_argument("--floor", default=None, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.floor:
        floor(args.floor, [Path(p) for p in rest])
        return
    print(f"devfix benchmark: {os.cpu_count()} CPUs (nproc), Python {sys.version.split()[0]}")
    started = time.perf_counter()
    if args.dir is not None:
        print(table(f"{args.dir}", directory_rows(Bench(args.dir.resolve(), 1))))
        return
    with tempfile.TemporaryDirectory(prefix="devfix-bench-") as work:
        work_path = Path(work)
        for size in (int(s) for s in args.sizes.split(",") if s):
            root = work_path / f"corpus_{size}"
            counts = corpus.generate(root, size, args.seed)
            repeat = 3 if size <= 100 else 1
            rows = corpus_rows(Bench(root, repeat), size, full=size <= 1000)
            print(
                table(
                    f"{size} files (seed {args.seed}: {counts['clean']} clean, {counts['buggy']} buggy, "
                    f"{counts['plain']} without torch)",
                    rows,
                ),
                flush=True,
            )
            shutil.rmtree(root, ignore_errors=True)
        if args.functions:
            sizes = [int(s) for s in args.functions.split(",") if s]
            print(table("linearity: one file, N functions", linearity_rows(work_path, sizes)), flush=True)
    print(f"benchmark time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

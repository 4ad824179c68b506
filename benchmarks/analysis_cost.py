"""How much a full `check` costs compared with a plain LibCST parse, on one corpus, in one run.

    python benchmarks/analysis_cost.py [CORPUS_DIR]

Default corpus: the Python sources of the installed torch.nn / torch.optim / torch.utils.data
(always available offline). The target from the foundation issue is a full check within 3x
the plain parse, measured on the official pytorch/examples repository (pass its checkout).
Every figure is the best of several repetitions; the ratios are what to read.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider

from devfix.analysis.facts import FileFacts
from devfix.config import Config
from devfix.engine import process_source


def corpus(root: Path):
    return [p.read_bytes() for p in sorted(root.rglob("*.py"))]


def best_of(function, repeat=3):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
    else:
        import torch

        root = Path(torch.__file__).parent / "nn"
    files = corpus(root)
    config = Config()

    def parse():
        for data in files:
            cst.parse_module(data)

    def parse_and_analyse():
        for data in files:
            facts = FileFacts(cst.parse_module(data))
            _ = (facts.models, facts.loader_loops, facts.optimizers)  # force the derived facts

    def full_check():
        for data in files:
            process_source(data, config, fix=False)

    def with_provider(provider):
        def run():
            for data in files:
                MetadataWrapper(cst.parse_module(data)).resolve(provider)

        return run

    base = best_of(parse)
    rows = [
        ("plain parse", base),
        ("parse + devfix analysis", best_of(parse_and_analyse)),
        ("devfix check (all rules, no pre-filter)", best_of(full_check)),
        ("parse + LibCST ParentNodeProvider", best_of(with_provider(ParentNodeProvider), 1)),
        ("parse + LibCST PositionProvider", best_of(with_provider(PositionProvider), 1)),
        ("parse + LibCST QualifiedNameProvider", best_of(with_provider(QualifiedNameProvider), 1)),
    ]
    print(f"corpus: {root} ({len(files)} files, {sum(map(len, files)) / 1e6:.1f} MB)")
    for name, seconds in rows:
        print(f"{name:<42} {seconds:7.2f} s   {seconds / base:5.2f}x parse")


if __name__ == "__main__":
    main()

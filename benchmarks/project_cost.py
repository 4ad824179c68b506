"""What analysing a repository as one program costs against analysing its files one by one.

    python benchmarks/project_cost.py [CORPUS_DIR]

Default corpus: the seeded 1,000-file corpus of `benchmarks/corpus.py` (a third of the files
import torch; multi-file projects among them). Both runs are in this process, with
`engine.process_project` and `--jobs 1`: the whole folder at once (the project index, the
linking, every file's summary), and then each file alone as a run of its own. The target
from the whole-projects issue: the project run costs no more than 1.3x the files one by one.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import generate

from devfix.config import Config
from devfix.results import FileResult
from devfix.runner import process_project


def reads(root: Path):
    return [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted(root.rglob("*.py"))]


def cpu(function) -> float:
    start = time.process_time()
    function()
    return time.process_time() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(work)
        if len(sys.argv) == 1:
            generate(root, 1000, seed=0)
        files = reads(root)
        config = Config()
        alone = cpu(lambda: [process_project([read], config, fix=False) for read in files])
        together = cpu(lambda: process_project(files, config, fix=False))
    print(
        f"{len(files)} files: one by one {alone:.2f} s CPU, as one project {together:.2f} s CPU, "
        f"ratio {together / alone:.2f}x (target <= 1.3x)"
    )


if __name__ == "__main__":
    main()

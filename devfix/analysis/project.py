"""What devfix knows about the other files of one run (spec principle 9).

The files of a run are one program. What a file's analysis learns about the others comes
from a cheap scan of every file's bytes before any file is parsed:

- which files choose the GPUs through the environment (`os.environ["CUDA_VISIBLE_DEVICES"]
  = args.gpu`), and the names of the functions that do it (`auto_select_gpu`). CUDA reads
  that variable once, when it is first queried, so a device declaration that runs before
  the program's own choice (at import time, or before a call to such a function) would
  make CUDA choose first.

The scan over-approximates on purpose (a mention is enough, a function is known by its
name): it only ever stops a declaration, never adds an edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import FrozenSet, List, Set, Tuple

GPU_CHOICE_TEXT = b"CUDA_VISIBLE_DEVICES"
_DEF = re.compile(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")


@dataclass(frozen=True)
class ProjectFacts:
    gpu_choice_files: FrozenSet[str] = frozenset()  # display paths of files that mention the variable
    gpu_choice_functions: FrozenSet[str] = frozenset()  # names of functions whose body mentions it

    def chooses_gpus_elsewhere(self, path: str) -> bool:
        """Another file of the run may set CUDA_VISIBLE_DEVICES."""
        return bool(self.gpu_choice_files - {path})

    @classmethod
    def from_files(cls, files: List[Tuple[str, bytes]]) -> "ProjectFacts":
        paths: Set[str] = set()
        functions: Set[str] = set()
        for path, data in files:
            if GPU_CHOICE_TEXT in data:
                paths.add(path)
                functions |= functions_choosing_gpus(data)
        return cls(frozenset(paths), frozenset(functions))


def functions_choosing_gpus(data: bytes) -> Set[str]:
    """Names of the functions (by indentation) whose body mentions CUDA_VISIBLE_DEVICES."""
    found: Set[str] = set()
    open_defs: List[Tuple[int, str]] = []
    for line in data.splitlines():
        stripped = line.lstrip()
        if not stripped or stripped.startswith(b"#"):
            continue
        indent = len(line) - len(stripped)
        while open_defs and open_defs[-1][0] >= indent:
            open_defs.pop()
        match = _DEF.match(line)
        if match:
            open_defs.append((indent, match.group(2).decode("ascii", "replace")))
        elif GPU_CHOICE_TEXT in line:
            found.update(name for _, name in open_defs)
    return found

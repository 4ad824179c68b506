"""How the files of a run find each other: import resolution and the analysis order."""

from __future__ import annotations

import os

from devfix.analysis.project import ProjectFacts, ProjectIndex

ROOT = os.path.abspath("proj")
FILES = {
    "proj/train.py": b"from model import Net\nimport utils\nfrom lib.data import load\n",
    "proj/model.py": b"import torch\nfrom .missing import x\n",
    "proj/utils.py": b"import os, torch\nfrom model import Net\n",
    "proj/lib/__init__.py": b"from .data import load\n",
    "proj/lib/data.py": b"from ..model import Net\nimport queue\n",
    "proj/scripts/run.py": b"from utils import helper\n",
    "proj/queue.py": b"",
}


def _index() -> ProjectIndex:
    return ProjectIndex(list(FILES))


def test_absolute_imports_resolve_from_the_importers_folder_up():
    index = _index()
    assert index.resolve("proj/train.py", "model", 0) == "proj/model.py"
    assert index.resolve("proj/train.py", "lib.data", 0) == "proj/lib/data.py"
    assert index.resolve("proj/train.py", "lib", 0) == "proj/lib/__init__.py"
    assert index.resolve("proj/scripts/run.py", "utils", 0) == "proj/utils.py"  # run from the repository


def test_relative_imports_count_their_dots():
    index = _index()
    assert index.resolve("proj/lib/__init__.py", "data", 1) == "proj/lib/data.py"
    assert index.resolve("proj/lib/data.py", "model", 2) == "proj/model.py"
    assert index.resolve("proj/lib/data.py", None, 1) == "proj/lib/__init__.py"


def test_library_and_standard_library_names_are_never_project_files():
    index = _index()
    assert index.resolve("proj/lib/data.py", "queue", 0) is None  # the standard library's, not proj/queue.py
    assert index.resolve("proj/train.py", "torch", 0) is None
    assert index.resolve("proj/train.py", "missing", 0) is None


def test_imported_files_are_analysed_first_and_cycles_do_not_hang():
    files = list(FILES.items())
    order = ProjectFacts.from_files(files).analysis_order(files)
    names = [files[i][0] for i in order]
    assert sorted(names) == sorted(FILES)
    assert names.index("proj/model.py") < names.index("proj/utils.py") < names.index("proj/train.py")
    assert names.index("proj/lib/data.py") < names.index("proj/lib/__init__.py") < names.index("proj/train.py")
    cyclic = [("a.py", b"import b\n"), ("b.py", b"import a\n")]
    assert sorted(ProjectFacts.from_files(cyclic).analysis_order(cyclic)) == [0, 1]

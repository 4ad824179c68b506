"""What ``devfix verify`` runs: a script, the entry script of a project folder,
or a module of a project (``-m pkg.train``), and where the user's code is.

No torch import here: resolving the target is done before the simulation starts,
and a target that cannot be resolved is a usage error (exit 2).
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

ENTRY_NAMES = ("train.py", "main.py", "__main__.py")
_GUARD = re.compile(r"""^if\s+(__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*:""", re.M)


class UsageError(Exception):
    """The target cannot be run: the message says why and what to pass instead."""


@dataclass
class Entry:
    """How to run the target, like ``python PATH`` or ``python -m MODULE``."""

    path: str | None  # the script to run (None for a module)
    module: str | None  # the module to run (None for a script)
    root: str  # the user's code: every file under this directory
    sys_path: list[str] = field(default_factory=list)  # put in front of sys.path, in this order
    argv0: str = ""  # sys.argv[0] (runpy sets a module's own file)


def resolve(target: str | None, module: str | None = None, cwd: str | None = None) -> Entry:
    cwd = os.path.abspath(cwd or os.getcwd())
    if module:
        return _module_entry(module, cwd)
    if not target:
        raise UsageError("give a script, a project folder, or -m MODULE")
    if os.path.isdir(target):
        root = os.path.abspath(target)
        entry = find_entry(target)
        here = os.path.dirname(os.path.abspath(entry))
        return Entry(os.path.abspath(entry), None, root, _unique([here, root]), entry)
    if os.path.isfile(target):
        path = os.path.abspath(target)
        here = os.path.dirname(path)
        # `python tools/train.py` run from the project root: the project is the current folder
        root = cwd if here == cwd or here.startswith(cwd + os.sep) else here
        return Entry(path, None, root, [here], target)
    raise UsageError(f"no such script: {target}")


def find_entry(folder: str) -> str:
    """The entry script of a project folder: its train.py, main.py or __main__.py, else
    its one file with an ``if __name__ == "__main__":`` block. Ambiguity is an error."""
    named = [n for n in ENTRY_NAMES if os.path.isfile(os.path.join(folder, n))]
    if len(named) == 1:
        return os.path.join(folder, named[0])
    if len(named) > 1:
        raise _ambiguous(folder, named)
    guarded = sorted(
        n
        for n in os.listdir(folder)
        if n.endswith(".py") and os.path.isfile(os.path.join(folder, n)) and has_main_guard(os.path.join(folder, n))
    )
    if len(guarded) == 1:
        return os.path.join(folder, guarded[0])
    if len(guarded) > 1:
        raise _ambiguous(folder, guarded)
    raise UsageError(
        f"no entry script in {folder}: looked for {', '.join(ENTRY_NAMES)} and for one file with "
        '`if __name__ == "__main__":`; pass the script\'s path'
    )


def _ambiguous(folder: str, names: Sequence[str]) -> UsageError:
    listed = ", ".join(names)
    return UsageError(
        f"{folder} has several entry scripts ({listed}): pass the one to run, "
        f"e.g. devfix verify {os.path.join(folder, names[0])}"
    )


def has_main_guard(path: str) -> bool:
    """Whether the file has a top-level ``if __name__ == "__main__":`` block."""
    try:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    except (OSError, UnicodeDecodeError):
        return False
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return bool(_GUARD.search(source))
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
            sides = [node.test.left, *node.test.comparators]
            if isinstance(node.test.ops[0], ast.Eq) and _is_name(sides) and _is_main(sides):
                return True
    return False


def _is_name(sides: Iterable[ast.expr]) -> bool:
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)


def _is_main(sides: Iterable[ast.expr]) -> bool:
    return any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def _module_entry(module: str, cwd: str) -> Entry:
    """``python -m MODULE`` from `cwd`: cwd first on sys.path, and the project root
    (the user's code) is cwd, or the folder holding the package found elsewhere."""
    top = module.split(".")[0]
    spec = importlib.machinery.PathFinder.find_spec(top, [cwd])
    root = cwd
    if spec is None:
        spec = importlib.util.find_spec(top)  # a top-level name: nothing is imported
        if spec is None or not spec.origin:
            raise UsageError(f"no module named {top!r} (looked in {cwd} and on sys.path)")
        location = spec.submodule_search_locations
        found = next(iter(location)) if location else spec.origin
        root = os.path.dirname(os.path.abspath(found))
    return Entry(None, module, root, [cwd], module)


def _unique(paths: Iterable[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out

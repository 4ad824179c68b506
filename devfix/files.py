"""Which files a run looks at: directories walked recursively, .gitignore honoured.

Python files (`.py`, `.pyi`) and Jupyter notebooks (`.ipynb`) are found; the notebooks'
`.ipynb_checkpoints` copies are in a hidden folder, so they are skipped like any.

Skips hidden directories, virtual environments (any folder holding `pyvenv.cfg`), and
`build/`, `dist/`, `__pycache__`, `site-packages`, `node_modules`. Files named explicitly on
the command line are checked whatever the excludes say, as ruff and black do, unless
`--force-exclude` is given. Symbolic links to directories
are not followed (a codemod must not wander out of the tree it was pointed at); symbolic
links to files are skipped during the walk.

Symbolic link policy (see docs/reliability.md): every file comes with the *tree* it was found
in — the directory given on the command line, or the folder of a file named explicitly.
devfix writes through a link only when the link's target lies inside that tree; a link that
points out of the tree is read and reported, never written (`devfix.writer`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Callable

import pathspec

SKIP_DIRS = {"build", "dist", "__pycache__", "site-packages", "node_modules", "venv", ".venv", "env"}
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIXES = (".ipynb",)  # their code cells are one program (devfix.notebooks)


class _GitIgnore:
    """One `.gitignore` file, anchored at its folder.

    A file's verdict is pathspec's GitIgnoreSpec's. A folder's is the last pattern that matches
    it, as git decides: GitIgnoreSpec ranks a pattern that matches through a trailing `/`
    below a plain one, so `*` then `!*/` (ignore everything but folders, then `!*.*`: the
    files with a suffix) would ignore every folder, and devfix would check nothing."""

    def __init__(self, base: Path, lines: Sequence[str]) -> None:
        self.base = base
        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def verdict(self, path: Path, is_dir: bool) -> bool | None:
        """Ignored (True), re-included (False), or not named by this file (None)."""
        try:
            relative = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        if is_dir:
            relative += "/"
        matching = [p for p in self.spec.patterns if p.include is not None and p.match_file(relative) is not None]
        if not matching:
            return None
        return bool(matching[-1].include) if is_dir else self.spec.match_file(relative)


def _load_gitignore(folder: Path) -> _GitIgnore | None:
    path = folder / ".gitignore"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return _GitIgnore(folder.resolve(), lines)


def _ignored(path: Path, is_dir: bool, specs: Sequence[_GitIgnore]) -> bool:
    """The deepest `.gitignore` that names the path decides, as in git (a folder's `!keep.py`
    re-includes what the root's `*.py` ignores)."""
    for spec in reversed(specs):
        verdict = spec.verdict(path, is_dir)
        if verdict is not None:
            return verdict
    return False


def _parent_gitignores(folder: Path) -> list[_GitIgnore]:
    """.gitignore files of the folders above `folder`, up to the repository root, outermost first."""
    specs = []
    for parent in folder.resolve().parents:
        spec = _load_gitignore(parent)
        if spec is not None:
            specs.append(spec)
        if (parent / ".git").exists():
            break
    return specs[::-1]


def discover(paths: Iterable[Path], exclude: Sequence[str] = ()) -> Iterator[Path]:
    """Python files and Jupyter notebooks under `paths`, in a stable (sorted) order, each once."""
    for path, _tree in discover_with_trees(paths, exclude):
        yield path


def discover_with_trees(
    paths: Iterable[Path],
    exclude: Sequence[str] = (),
    *,
    is_excluded: Callable[[Path, bool], bool] | None = None,
    force_exclude: bool = False,
) -> Iterator[tuple[Path, Path]]:
    """(file, the resolved tree it belongs to) for each file `discover` yields.

    `exclude` patterns are matched from each path given; `is_excluded(path, is_dir)` decides
    with patterns anchored elsewhere (devfix.settings: at each configuration's folder). A file
    named explicitly is checked whatever excludes say, unless `force_exclude` (pre-commit hands
    every changed file over by name)."""
    excluded = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None
    seen = set()
    for root in paths:
        if root.is_file():
            if force_exclude and is_excluded is not None and _named_file_excluded(root, is_excluded):
                continue
            candidates: Iterable[Path] = [root]
            tree = Path(os.path.abspath(root)).parent.resolve()
        else:
            candidates = _walk(root, excluded, is_excluded)
            tree = root.resolve()
        for path in candidates:
            key = os.path.normcase(os.path.abspath(path))
            if key not in seen:
                seen.add(key)
                yield path, tree


def _named_file_excluded(path: Path, is_excluded: Callable[[Path, bool], bool]) -> bool:
    """A file named on the command line, under `--force-exclude`: excluded if it or any folder
    above it is (`legacy/` excludes `legacy/a/b.py`), as the walk would have skipped it."""
    absolute = Path(os.path.abspath(path))
    if is_excluded(absolute, False):
        return True
    return any(is_excluded(folder, True) for folder in absolute.parents if folder != Path(folder.anchor))


def _walk(
    root: Path, excluded: pathspec.GitIgnoreSpec | None, is_excluded: Callable[[Path, bool], bool] | None = None
) -> Iterator[Path]:
    inherited = _parent_gitignores(root.resolve())
    resolved_root = root.resolve()
    # Each stack entry: (folder, the .gitignore specs that apply inside it).
    stack = [(root, inherited)]
    while stack:
        folder, specs = stack.pop()
        own = _load_gitignore(folder)
        if own is not None:
            specs = [*specs, own]
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subfolders = []
        for entry in entries:
            path = Path(entry.path)
            resolved = path.resolve() if entry.is_symlink() else Path(os.path.abspath(path))
            if entry.is_dir(follow_symlinks=False):
                if (
                    _skip_dir(entry.name, path)
                    or _ignored(resolved, True, specs)
                    or _excluded(path, root, excluded, True)
                    or (is_excluded is not None and is_excluded(path, True))
                ):
                    continue
                subfolders.append((path, specs))
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(PYTHON_SUFFIXES + NOTEBOOK_SUFFIXES):
                if (
                    _ignored(resolved, False, specs)
                    or _excluded(path, root, excluded, False)
                    or (is_excluded is not None and is_excluded(path, False))
                ):
                    continue
                if resolved_root not in resolved.parents and resolved.parent != resolved_root:
                    continue
                yield path
        stack.extend(reversed(subfolders))


def _skip_dir(name: str, path: Path) -> bool:
    return name.startswith(".") or name in SKIP_DIRS or (path / "pyvenv.cfg").exists()


def _excluded(path: Path, root: Path, excluded: pathspec.GitIgnoreSpec | None, is_dir: bool) -> bool:
    if excluded is None:
        return False
    relative = path.relative_to(root).as_posix()
    return excluded.match_file(relative + ("/" if is_dir else "")) or excluded.match_file(path.name)

"""The run's last step: which classes and functions of the run only GPU-only code uses.

A class that only code which cannot run without a GPU builds (`Seq2Seq` used only after
`assert torch.cuda.is_available()`, or only by files that fail to import on every machine)
never runs on a CPU-only machine: its hard-coded `.cuda()` crashes nothing (users.py, reach.py).
The engine analyses the defining files again with these names, a few rounds at most; these
functions read the run's results and files only, never a tree of their own.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from devfix.analysis import users
from devfix.analysis.project import ProjectFacts
from devfix.analysis.text import indented_defs, named_in_own_file, top_level_names
from devfix.results import FileResult


def gpu_only_users(
    reads: Sequence[FileResult],
    results: Sequence[FileResult],
    mentions: dict[int, users.Mentions | None],
    project: ProjectFacts | None = None,
) -> dict[str, frozenset[str]]:
    """users.gpu_only_users, less the names some file mentions in another way (handed to other
    code, subclassed): who builds them there is not known, unless that file cannot even be
    imported without a GPU (llm-awq's `demo.py`, which imports the AWQ kernels, then hands
    `stream_generator = StreamGenerator` on: only GPU code runs it). `mentions` keeps each
    file's users.mentioned_elsewhere for the next round."""
    uses = [use for result in results for use in result.uses]
    owners = _method_owners(reads, {name for path, name, runs in uses if path == users.BY_NAME and not runs})
    resolved = [
        (owners[name][0], f"{owners[name][1]}.{name}", runs)
        if path == users.BY_NAME and name in owners
        else (path, name, runs)
        for path, name, runs in uses
    ]
    candidates = users.gpu_only_users(use for use in resolved if use[0] != users.BY_NAME)
    # `Class.method` is handed to other code where the method's own name is written other than in a call
    names = frozenset(name.rsplit(".", 1)[-1] for found in candidates.values() for name in found)
    if not names:
        return {}
    mentioned: set[str] = set()
    subclasses: dict[str, set[str]] = {}  # a base class, written by its name: its subclasses
    for index, read in enumerate(reads):
        if project is not None and project.needs_gpu_to_import(read.path, read.old):
            continue
        if read.error is None and _mentions_other_than_calls(read.old, names):
            try:
                if index not in mentions:
                    mentions[index] = users.mentioned_elsewhere(read.old)
                found_here = users.named_elsewhere(read.old, names, mentions[index])
            except Exception:  # noqa: BLE001 - neither parser reads it: a file Python cannot compile never runs
                continue  # (PC-DARTS' Python 2 scripts beside the Python 3 ones), so it hands nothing over
            mentioned |= found_here.names
            for base, subclass in found_here.bases:
                subclasses.setdefault(base, set()).add(subclass)
    found = {
        path: frozenset(n for n in found if n.rsplit(".", 1)[-1] not in mentioned) for path, found in candidates.items()
    }
    return {path: names for path, names in _only_gpu_subclasses(found, subclasses).items() if names}


def _only_gpu_subclasses(
    found: dict[str, frozenset[str]], subclasses: dict[str, set[str]]
) -> dict[str, frozenset[str]]:
    """`found` less the base classes some subclass of which is not GPU-only itself: a base
    class is built wherever a subclass is (hgraph2graph's `HierVGNN`, the base of
    `HierCondVGNN`: both built only after a GPU-only vocabulary)."""
    while True:
        kept = {name for names in found.values() for name in names}
        dropped = {base for base, below in subclasses.items() if not below <= kept}
        fewer = {path: frozenset(n for n in names if n not in dropped) for path, names in found.items()}
        if fewer == found:
            return found
        found = fewer


def _method_owners(reads: Sequence[FileResult], names: set[str]) -> dict[str, tuple[str, str]]:
    """For each method name some GPU-only code calls on an object of unknown class: the file
    and top-level class of its one definition in the run (a name defined twice, or as a nested
    function, is nobody's; so is one of a file that calls `getattr`, which may reach its
    methods by a computed name). A top-level function of the same name is no rival: the call
    is on an object, not on a module, which the flow would have named (YOLOX's
    `Exp.random_resize` beside `data_prefetcher.random_resize`)."""
    wanted = {name.encode() for name in names}
    if not wanted:
        return {}
    found: dict[bytes, list[tuple[str, bytes | None]]] = {}
    for read in reads:
        if read.error is None and any(b"def " + name in read.old for name in wanted):
            computed = b"getattr(" in read.old
            definitions = indented_defs(read.old)
            for name, owner in definitions:
                if name in wanted:
                    found.setdefault(name, []).append((read.path, None if computed else owner))
    return {
        name.decode(): (places[0][0], places[0][1].decode())
        for name, places in found.items()
        if len(places) == 1 and places[0][1] is not None
    }


def used_only_by_broken_files(
    reads: Sequence[FileResult], results: Sequence[FileResult], project: ProjectFacts
) -> dict[str, frozenset[str]]:
    """Top-level classes and functions that only files Python cannot compile name (darts' Python 2
    training scripts, `print "..."`): those scripts never run, so neither does this code. They
    join the GPU-only users' names: devfix leaves code that never runs without a GPU alone."""
    broken = set()
    for read, result in zip(reads, results):
        if result.error is not None and result.error.startswith("cannot parse"):
            try:
                compile(read.old, read.path, "exec")
            except (SyntaxError, ValueError):
                broken.add(read.path)
    if not broken:
        return {}
    found = _imported_only_by_broken_files(reads, broken, project)
    resolved: dict[str, dict[str, set[str]]] = {}  # per file, the defining files its calls of a name reach
    for read, result in zip(reads, results):
        if read.path not in broken:
            for defined in top_level_names(read.old):
                resolved.setdefault(read.path, {})[defined.decode("ascii", "replace")] = {read.path}
        for path, name, _ in result.uses:
            resolved.setdefault(read.path, {}).setdefault(name, set()).add(path)
    for read in reads:
        names = project.named_by.get(read.path, {})
        dead = [
            name
            for name, users in names.items()
            if set() < _naming(read.path, name, users, resolved) <= broken and not named_in_own_file(read.old, name)
        ]
        if dead and read.path not in broken:
            found[read.path] = found.get(read.path, frozenset()) | frozenset(dead)
    return found


def _imported_only_by_broken_files(
    reads: Sequence[FileResult], broken: set[str], project: ProjectFacts
) -> dict[str, frozenset[str]]:
    """The top-level names of modules that only files Python cannot compile import, directly
    or through such modules (manifold_mixup's `models` package, imported only by a `main.py`
    that writes `.cuda(async=True)`): nothing that can run imports them. Names the module uses
    itself (a `__main__` self-test's) may run, and a module a notebook imports is kept."""
    index = project.index
    if index is None:
        return {}
    data = {read.path: read.old for read in reads}
    importers: dict[str, set[str]] = {}
    for read in reads:
        if read.path.endswith(".py"):
            for imported in index.imports(read.path, read.old):
                if imported != read.path:
                    importers.setdefault(imported, set()).add(read.path)
    notebooks = [read.old for read in reads if not read.path.endswith(".py")]
    dead: set[str] = set()
    changed = True
    while changed:
        changed = False
        for path, by in importers.items():
            if path in dead or path in broken or path not in data or not by <= broken | dead:
                continue
            if _imported_in(notebooks, path):
                continue
            dead.add(path)
            changed = True
    found = {}
    for path in dead:
        names = (name.decode("ascii", "replace") for name in top_level_names(data[path]))
        runs_itself = b"__main__" in data[path]  # a self-test may use some of its names
        found[path] = frozenset(name for name in names if not (runs_itself and named_in_own_file(data[path], name)))
    return found


def _imported_in(texts: Sequence[bytes], path: str) -> bool:
    """An import in one of `texts` (notebooks, which no import scan reads) names the module:
    its file's name, or its package's for an `__init__.py`."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "__init__":
        stem = os.path.basename(os.path.dirname(path))
    line = re.compile(rb"(?:import|from)[ \t]+[\w., \t]*\b" + re.escape(stem.encode()) + rb"\b")
    return any(line.search(text) for text in texts)


def _naming(path: str, name: str, users: frozenset[str], resolved: dict[str, dict[str, set[str]]]) -> set[str]:
    """The files that write `name` (a text match) less those that define their own `name` or
    whose calls of it reach another file's only: two sub-projects, each with an `Architect`."""
    return {
        user
        for user in users
        if user != path and not (resolved.get(user, {}).get(name) and path not in resolved[user][name])
    }


def _mentions_other_than_calls(data: bytes, names: frozenset[str]) -> bool:
    """A cheap text test before a parse: the file writes one of `names` somewhere that is not
    `name(`, an import line or its own `def`/`class` line. Only such a file can hand the class
    or function to other code (users.named_elsewhere decides, on the parsed file)."""
    for name in names:
        token = name.encode()
        if token not in data:
            continue
        for line in data.splitlines():
            stripped = line.lstrip()
            if token not in line or stripped.startswith((b"import ", b"from ", b"def " + token, b"class " + token)):
                continue
            if re.search(rb"\b" + re.escape(token) + rb"\b(?!\s*\()", line):
                return True
    return False

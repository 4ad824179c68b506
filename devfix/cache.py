"""The cache: what a group of files gave last time, found again by a hash of all it depends on.

As ruff's cache does, it lets a re-run of an unchanged repository (a pre-commit hook, CI on a
branch) skip the analysis. It lives in `.devfix_cache/` in the working directory (or
`--cache-dir`), which holds its own `.gitignore`, so git never sees it; `--no-cache` turns it
off.

The unit is the engine's: a group of files linked by imports (project.groups), which is
analysed apart from the others. A group's key is a hash of everything its analysis reads:

- devfix's version, and the size and time of every source file of the devfix that runs (an
  editable install changes code without changing the version), Python's and LibCST's versions;
- check or apply; each file's path, bytes and configuration (the nearest pyproject.toml's
  settings with the command line on top);
- what the run's text scans tell the group's files about the rest of the run, before any
  parse (project.py): its functions that no other file names, what other files' calls pass
  them, its names other files write, a GPU choice in another file of its program, imports of
  project modules that do not exist on disk, CUDA extensions the run builds. A changed file
  elsewhere in the run that changes one of these changes the key; one that does not, does not.

What is stored is the group's results as the report needs them (findings with their fixes,
the fixed bytes, errors, places left undecided) and the calls of project classes and
functions the run's last step reads (users.py), as JSON: no code is ever loaded from the
cache. A group that the last step analyses again (a class only GPU-only code uses) is
analysed in full, cache or not. A cache that cannot be read is ignored; one that cannot be
written is left as it was: the cache never changes what devfix reports.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import devfix
from devfix.analysis.imports import ProjectIndex, imports_any
from devfix.analysis.project import ProjectFacts
from devfix.config import Config
from devfix.results import Diagnostic, FileResult, FixEdit

DEFAULT_DIR = ".devfix_cache"
_FILE = "groups.json"
_RUNS_KEPT = 8  # whole runs remembered (check and apply, a few sets of files)


def _devfix_fingerprint() -> str:
    """devfix's version, the sizes and times of its source files, Python's version, and
    LibCST's installed files (found, not imported: a re-run the cache answers never needs the
    parser, and importing it is most of a cached run's cost)."""
    digest = hashlib.sha256(f"{devfix.__version__}|{sys.version_info[:3]}".encode())
    package = Path(devfix.__file__).parent
    for path in sorted(package.rglob("*.py")):
        _stat_into(digest, path, package)
    spec = importlib.util.find_spec("libcst")
    if spec is not None and spec.origin is not None:
        parser = Path(spec.origin).parent
        for path in sorted([parser / "_version.py", *parser.glob("native*")]):
            _stat_into(digest, path, parser)
    return digest.hexdigest()


def _stat_into(digest: Any, path: Path, base: Path) -> None:
    try:
        stat = path.stat()
    except OSError:
        return
    digest.update(f"{path.relative_to(base)}|{stat.st_size}|{stat.st_mtime_ns}\n".encode())


class Cache:
    """The groups' entries of one cache folder: read once at the start, written once at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.fingerprint = _devfix_fingerprint()
        self.entries: dict[str, dict[str, Any]] = {}  # the group's paths, joined -> {"key", "results"}
        self.runs: dict[
            str, dict[str, Any]
        ] = {}  # a run's files, hashed -> {"key", "results"}: the last run of those files
        self.changed = False
        self.hits = 0
        try:
            stored = json.loads((folder / _FILE).read_text(encoding="utf-8"))
            if stored.get("devfix") == self.fingerprint:
                self.entries, self.runs = dict(stored["groups"]), dict(stored["runs"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass  # no cache yet, or one this devfix cannot read: start empty

    def key(
        self,
        group: Sequence[int],
        reads: Sequence[FileResult],
        configs: Sequence[Config],
        fix: bool,
        project: ProjectFacts,
    ) -> str:
        digest = hashlib.sha256(f"{self.fingerprint}|fix={fix}|{_project_wide(project)}".encode())
        for index in group:
            read = reads[index]
            digest.update(b"\0file\0")
            digest.update(read.path.encode("utf-8", "surrogateescape"))
            digest.update(hashlib.sha256(read.old).digest())
            digest.update(repr(configs[index]).encode("utf-8", "surrogateescape"))
            digest.update(_what_the_run_tells(read.path, read.old, project).encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    # -- a whole run --------------------------------------------------------------------------
    def run_key(self, reads: Sequence[FileResult], configs: Sequence[Config], fix: bool) -> str:
        """A hash of all a run reads: every file's path, bytes and configuration, and what the
        file system says about them beside (imports of project modules that do not exist,
        packaging metadata above a package). Equal: every group's key is what it was, and the
        run's results are the last run's, found without the text scans."""
        index = ProjectIndex([read.path for read in reads])
        digest = hashlib.sha256(f"{self.fingerprint}|fix={fix}|run".encode())
        for read, config in zip(reads, configs):
            missing = (
                sorted(index.missing_imports(read.path, read.old))
                if index.several and read.path.endswith(".py")
                else []
            )
            digest.update(
                repr((read.path, read.error, repr(config), missing, index.in_library(read.path))).encode(
                    "utf-8", "surrogateescape"
                )
            )
            digest.update(hashlib.sha256(read.old).digest())
        return digest.hexdigest()

    def get_run(self, reads: Sequence[FileResult], key: str) -> dict[int, FileResult] | None:
        entry = self.runs.get(_run_name(reads))
        if entry is None or entry.get("key") != key:
            return None
        position = {read.path: i for i, read in enumerate(reads)}
        try:
            return {position[path]: _decode(reads[position[path]], encoded) for path, encoded in entry["results"]}
        except (KeyError, TypeError, ValueError, IndexError):
            return None

    def put_run(self, reads: Sequence[FileResult], key: str, results: dict[int, FileResult]) -> None:
        name = _run_name(reads)
        self.runs.pop(name, None)
        self.runs[name] = {"key": key, "results": [[reads[i].path, _encode(r)] for i, r in sorted(results.items())]}
        while len(self.runs) > _RUNS_KEPT:
            del self.runs[next(iter(self.runs))]  # the oldest
        self.changed = True

    # -- a group of files ---------------------------------------------------------------------
    def get(self, group: Sequence[int], reads: Sequence[FileResult], key: str) -> dict[int, FileResult] | None:
        """The group's results (index -> FileResult), if stored under `key`."""
        entry = self.entries.get(_name(group, reads))
        if entry is None or entry.get("key") != key:
            return None
        try:
            results = {
                group[position]: _decode(reads[group[position]], encoded) for position, encoded in entry["results"]
            }
        except (KeyError, TypeError, ValueError, IndexError):
            return None
        self.hits += 1
        return results

    def put(self, group: Sequence[int], reads: Sequence[FileResult], key: str, results: dict[int, FileResult]) -> None:
        position = {index: i for i, index in enumerate(group)}
        self.entries[_name(group, reads)] = {
            "key": key,
            "results": [[position[i], _encode(r)] for i, r in sorted(results.items())],
        }
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Automatically created by devfix.\n*\n", encoding="utf-8")
            text = json.dumps(
                {"devfix": self.fingerprint, "groups": self.entries, "runs": self.runs}, separators=(",", ":")
            )
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".groups-", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, self.folder / _FILE)
        except OSError:
            pass  # a read-only checkout: run without writing the cache


def _run_name(reads: Sequence[FileResult]) -> str:
    return hashlib.sha256("\n".join(read.path for read in reads).encode("utf-8", "surrogateescape")).hexdigest()


def _name(group: Sequence[int], reads: Sequence[FileResult]) -> str:
    return "\n".join(reads[index].path for index in group)


def _project_wide(project: ProjectFacts) -> str:
    several = project.index is not None and project.index.several
    flags = (project.plain_gpu_tensors, project.own_cuda_objects, project.scripts_modules)
    return f"several={several}|gpu_functions={sorted(project.gpu_choice_functions)}|flags={flags}"


def _what_the_run_tells(path: str, data: bytes, project: ProjectFacts) -> str:
    """What the run's other files tell this file's analysis (ProjectFacts.view and the facts
    the engine gives it), in a stable text."""
    index = project.index
    missing = sorted(index.missing_imports(path, data)) if index is not None and index.several else []
    passed = sorted((name, count, sorted(keywords)) for name, (count, keywords) in project.passed.get(path, {}).items())
    return repr(
        (
            sorted(project.unreferenced.get(path, ())),
            missing,
            imports_any(data, project.cuda_extensions),
            path in project.builds_cuda_on_import,
            passed,
            sorted((name, _in_order(users)) for name, users in project.named_by.get(path, {}).items()),
            project.chooses_gpus_elsewhere(path),
        )
    )


@functools.lru_cache(maxsize=4096)
def _in_order(paths: frozenset[str]) -> tuple[str, ...]:
    """A shared set of the files that name a name (project.named_in_other_files), sorted once
    for every file that defines the name."""
    return tuple(sorted(paths))


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _encode(result: FileResult) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(result):
        if item.name in ("path", "old", "summary", "linked_calls"):
            continue  # the path and bytes are the read's; summaries are not kept (module docstring)
        fields[item.name] = getattr(result, item.name)
    fields["new"] = None if result.new == result.old else _text(result.new)
    fields["diagnostics"] = [dataclasses.asdict(d) for d in result.diagnostics]
    return fields


def _decode(read: FileResult, fields: dict[str, Any]) -> FileResult:
    new = read.old if fields["new"] is None else fields["new"].encode("utf-8", "surrogateescape")
    diagnostics = [Diagnostic(**{**d, "edits": tuple(FixEdit(**e) for e in d["edits"])}) for d in fields["diagnostics"]]

    def rows(name: str) -> list[Any]:  # JSON's lists back to the tuples they were
        return [tuple(item) for item in fields[name]]

    return FileResult(
        read.path,
        read.old,
        new,
        diagnostics,
        error=fields["error"],
        traceback=fields["traceback"],
        undecided_cells=list(fields["undecided_cells"]),
        suppression_cells=list(fields["suppression_cells"]),
        uses=rows("uses"),
        undecided=rows("undecided"),
        cells=rows("cells"),
        cell_errors=rows("cell_errors"),
        suppression_notes=rows("suppression_notes"),
    )

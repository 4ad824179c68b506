"""`--jobs N`: the groups of files linked by imports, analysed in a pool of processes.

A group (project.groups) is analysed apart from the others with a project state of its own
(engine.analyse_group), so where it runs changes nothing: one process or many, the results
are the same, and the engine puts them back in the files' order. Each worker receives the
run's text scans once, when it starts; a task carries only its group's bytes and
configurations, and brings back the group's results, without the summaries its files left
for their importers unless a call in the group runs only on a GPU: those summaries hold
LibCST trees, slower to send than to build again, and only the run's last step may need
them, for such groups (for another group it would analyse it again itself).

In one process as in many, the summaries of the other groups are dropped, so memory does not
grow with the number of files analysed.

A group that cannot go through the pool (a result that cannot be sent back, a worker that
died) is analysed again here, in this process: a worker's trouble never changes the output.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING

from devfix.analysis.project import NameScans, ProjectFacts, name_scans_apart
from devfix.config import Config
from devfix.results import FileResult

if TYPE_CHECKING:
    from devfix.engine import GroupResult

_PROJECT: ProjectFacts | None = None  # in a worker: the run's text scans
# The bytes of Python from which the text scans' two halves run in two processes (a worker's
# start and the files sent to it cost about as much as the scans of 0.3 MB).
_SCANS_APART_FROM = 1_000_000


def default_jobs() -> int:
    """The number of CPUs this process may use (a container's or a CPU set's limit counts)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class TextScans:
    """The run's text scans (ProjectFacts.from_files), begun as soon as the files are read.

    With processes to spare and enough files to pay for one, the half that reads who names
    what starts at once in another process, while this one imports the engine and reads the
    definitions and their callers: before the groups can be analysed, nothing else runs."""

    def __init__(self, files: list[tuple[str, bytes]], jobs: int) -> None:
        self.files = files
        self._pool: ProcessPoolExecutor | None = None
        self._names: Future[NameScans] | None = None
        if jobs > 1 and sum(len(data) for _, data in files) >= _SCANS_APART_FROM:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=_context())
            self._names = self._pool.submit(name_scans_apart, files)

    def facts(self) -> ProjectFacts:
        try:
            if self._names is not None:
                try:
                    return ProjectFacts.from_files(self.files, names=self._names)
                except Exception:  # noqa: BLE001 - e.g. the worker died: the scans in this process
                    pass
            return ProjectFacts.from_files(self.files)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False)  # its work is done: nothing to wait for


def _context() -> multiprocessing.context.BaseContext:
    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")


def analyse_groups(
    groups: Sequence[list[int]],
    reads: Sequence[FileResult],
    configs: Sequence[Config],
    fix: bool,
    project: ProjectFacts,
    jobs: int,
) -> Iterator[tuple[list[int], GroupResult]]:
    """(group, engine.GroupResult) for each group, in the groups' order."""
    from devfix.engine import analyse_group

    jobs = min(jobs, len(groups))
    if jobs <= 1:
        for group in groups:
            # trimmed here too: the summaries' trees of every group kept to the end made memory
            # grow with the number of files
            yield group, analyse_group(group, reads, configs, fix, project).trimmed()
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=_start, initargs=(project,)) as pool:
        # the largest groups first, so that no worker is left with a big one at the end
        futures: dict[int, Future[GroupResult]] = {}
        for position in sorted(range(len(groups)), key=lambda p: -sum(len(reads[i].old) for i in groups[p])):
            group = groups[position]
            futures[position] = pool.submit(
                _analyse, group, [reads[i] for i in group], [configs[i] for i in group], fix
            )
        for group, future in zip(groups, (futures[position] for position in range(len(groups)))):
            try:
                done = future.result()
            except Exception:  # noqa: BLE001 - e.g. a result too deep to pickle: do it here
                yield group, analyse_group(group, reads, configs, fix, project)
                continue
            done.results = {group[i]: result for i, result in done.results.items()}
            yield group, done


def _start(project: ProjectFacts) -> None:
    global _PROJECT
    _PROJECT = project


def _analyse(group: list[int], reads: Sequence[FileResult], configs: Sequence[Config], fix: bool) -> GroupResult:
    """In a worker: the group, its files numbered 0..n-1 (the caller maps them back)."""
    from devfix.engine import analyse_group

    assert _PROJECT is not None
    done = analyse_group(list(range(len(group))), reads, configs, fix, _PROJECT).trimmed()
    done.parses = {}  # LibCST trees cost more to send back than to parse again
    return done

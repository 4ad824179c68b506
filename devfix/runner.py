"""A run over many files: notebooks joined into programs, the run's cache, then the engine.

What a re-run of an unchanged repository needs is here and in the modules it imports at its
top (the cache, the results, the notebooks' reader): none of them imports LibCST, the
analysis or the rules, so a re-run that the cache answers costs the reading and hashing of
the files, not the start-up of the analysis. The engine is imported when a file must be
analysed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable

from devfix import notebooks, parallel
from devfix.config import Config
from devfix.results import FileResult, FixEdit

if TYPE_CHECKING:
    from devfix.cache import Cache


def process_project(
    reads: Sequence[FileResult],
    config: Config,
    *,
    fix: bool,
    configs: Sequence[Config] | None = None,
    progress: Callable[[], None] | None = None,
    jobs: int = 1,
    cache: Cache | None = None,
) -> list[FileResult]:
    """Check (and with `fix`, rewrite) the files of one run as one program (spec principle 9).

    `reads` are the files' bytes as unchanged results (or the reason they could not be read).
    Each file is analysed once, after the project files it imports, whose summaries its
    analysis reads; the results come back in the order given. A notebook (`.ipynb`) takes
    part as the Python program its code cells make (notebooks.py): analysed like a script,
    never imported by the others, its findings and edits given back to its cells.
    `configs`, one per read, gives each file its own configuration (the nearest
    pyproject.toml's, devfix.settings); without it `config` applies to all. `progress` is
    called once each file's first analysis is done (a progress bar). `jobs` above 1 analyses
    the groups of files linked by imports in that many processes (parallel.py); the results
    are the same as with one. `cache` (cache.Cache) gives back the results of groups of files
    analysed before with the same inputs, and keeps the others'.
    """
    programs = list(reads)
    read_notebooks: dict[int, notebooks.Notebook] = {}
    for index, read in enumerate(reads):
        if read.error is None and notebooks.is_notebook(read.path):
            try:
                notebook = notebooks.read(read.old)
            except notebooks.NotebookError as error:
                programs[index] = FileResult(read.path, read.old, read.old, error=str(error))
                continue
            read_notebooks[index] = notebook
            program = notebook.program.encode("utf-8")
            programs[index] = FileResult(read.path, program, program)
    results = _process_programs(
        programs,
        list(configs) if configs is not None else [config] * len(programs),
        fix=fix,
        progress=progress or (lambda: None),
        jobs=jobs,
        cache=cache,
    )
    for index, notebook in read_notebooks.items():
        results[index] = _notebook_result(reads[index], notebook, results[index])
    return results


def _notebook_result(read: FileResult, notebook: notebooks.Notebook, result: FileResult) -> FileResult:
    """The result of a notebook's program, told in the notebook's terms: its bytes, and each
    position as (cell, line in the cell)."""
    error = _in_cells(notebook, result.error) if result.error is not None else None
    out = FileResult(
        read.path,
        read.old,
        read.old,
        error=error,
        traceback=result.traceback,
        summary=result.summary,
        linked_calls=result.linked_calls,
        uses=result.uses,
        cell_errors=notebook.unparsed(),
    )
    if result.error is not None or notebook.places_in_unparsed_cells():
        return out  # nothing is reported, nothing changed: the cell errors say why
    for diagnostic in result.diagnostics:
        cell, line = notebook.position(diagnostic.line)
        end_cell, end_line = notebook.position(diagnostic.end_line) if diagnostic.end_line else (cell, 0)
        edits = tuple(_edit_in_cells(notebook, edit) for edit in diagnostic.edits)
        out.diagnostics.append(
            dataclasses.replace(
                diagnostic,
                cell=cell,
                line=line,
                column=notebook.column(cell, diagnostic.column),
                message=_in_cells(notebook, diagnostic.message),
                hint=_in_cells(notebook, diagnostic.hint),
                edits=edits,
                end_line=end_line if end_cell == cell else 0,
                end_column=notebook.column(cell, diagnostic.end_column) if end_cell == cell else 0,
            )
        )
    for line, column, why in result.suppression_notes:
        cell, line = notebook.position(line)
        out.suppression_notes.append((line, column, why))
        out.suppression_cells.append(cell)
    for line, column, code in result.undecided:
        cell, line = notebook.position(line)
        out.undecided.append((line, column, code))
        out.undecided_cells.append(cell)
    if result.new != result.old:
        try:
            text, out.cells = notebook.write(result.new.decode("utf-8"))
        except notebooks.NotebookError as error:
            out.fail(str(error), None)
            return out
        out.new = text.encode("utf-8")
    return out


def _edit_in_cells(notebook: notebooks.Notebook, edit: FixEdit) -> FixEdit:
    cell, line = notebook.position(edit.line)
    _, end_line = notebook.position(edit.end_line)
    return dataclasses.replace(edit, cell=cell, line=line, end_line=end_line)


_LINE_REFERENCE = re.compile(r"\(line (\d+)(?=[:);])")


def _in_cells(notebook: notebooks.Notebook, message: str) -> str:
    """A message's references to other lines (`(line 8: `model.cuda()`)`), in cells."""

    def cell_line(match: re.Match[str]) -> str:
        cell, line = notebook.position(int(match.group(1)))
        return f"(cell {cell}, line {line}"

    return _LINE_REFERENCE.sub(cell_line, message)


def _process_programs(
    reads: Sequence[FileResult],
    configs: Sequence[Config],
    *,
    fix: bool,
    progress: Callable[[], None],
    jobs: int,
    cache: Cache | None,
) -> list[FileResult]:
    """The results of the whole run from the cache when it has them (nothing else is read),
    else from the engine (engine.process_programs)."""
    run_key = ""
    if cache is not None:
        run_key = cache.run_key(reads, configs, fix)
        known = cache.get_run(reads, run_key)
        if known is not None:
            for _ in reads:
                progress()
            return [known.get(index, read) for index, read in enumerate(reads)]
    # the run's text scans first: with --jobs, half of them run in another process while
    # this one imports the engine
    scans = parallel.TextScans([(read.path, read.old) for read in reads], jobs)
    from devfix import engine  # the parser, the analysis and the rules: only when needed

    return engine.process_programs(
        reads, configs, fix=fix, progress=progress, jobs=jobs, cache=cache, run_key=run_key, scans=scans
    )

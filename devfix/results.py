"""What a run tells about one file: its diagnostics, the edits of its fixes, its old and new bytes.

Plain data, shared by the engine that makes it, the parallel workers and the cache that
carry it, and the reports that print it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devfix.analysis.linking import Callee, ModuleSummary
    from devfix.analysis.users import Use
    from devfix.analysis.values import Value


@dataclass(frozen=True)
class Diagnostic:
    line: int
    column: int
    code: str
    name: str
    message: str
    status: str  # "fixed" | "fixable" | "unsafe-fix" | "no-fix"
    hint: str = ""
    cell: int | None = None  # in a notebook: the cell (`line` is then the line in that cell)
    end_line: int = 0  # where the flagged code ends (0: unknown); in a notebook, in the same cell
    end_column: int = 0
    edits: tuple[FixEdit, ...] = ()  # the fix, for machines (JSON); empty when there is none


@dataclass(frozen=True)
class FixEdit:
    """One edit of a finding's fix, as devfix plans it, in the original file's positions, so a
    reviewer or a tool can read what a finding changes without the whole diff. `kind` is
    `replace` (the range becomes `content`), `insert-before`/`insert-after` (statements put
    next to the statement in the range, at its indentation; `content` unindented) or
    `replace-statement` (the statement in the range becomes `content`, empty: removed)."""

    kind: str
    line: int
    column: int
    end_line: int
    end_column: int
    content: str
    cell: int | None = None


@dataclass
class FileResult:
    path: str
    old: bytes
    new: bytes
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: str | None = None
    traceback: str | None = None
    summary: ModuleSummary | None = None  # what the file tells its importers (not shown)
    linked_calls: list[tuple[Callee, dict[str, Value] | None]] = field(
        default_factory=list
    )  # its calls of other project files' functions (and its loaders' verdicts: LoaderVerdict)
    uses: list[Use] = field(
        default_factory=list
    )  # its calls of top-level classes and functions of the project (users.py)
    undecided: list[tuple[int, int, str]] = field(
        default_factory=list
    )  # (line, column, code): places it could not judge
    undecided_cells: list[int | None] = field(default_factory=list)  # in a notebook: the cell of each undecided place
    cells: list[tuple[int, str, str]] = field(
        default_factory=list
    )  # in a notebook: (cell, old source, new source) changed
    cell_errors: list[tuple[int, str]] = field(
        default_factory=list
    )  # in a notebook: (cell, why) cells it could not read
    suppression_notes: list[tuple[int, int, str]] = field(
        default_factory=list
    )  # (line, column, why): suppressions that silence nothing
    suppression_cells: list[int | None] = field(default_factory=list)  # in a notebook: the cell of each note

    @property
    def changed(self) -> bool:
        return self.error is None and self.new != self.old

    def fail(self, error: str | None, tb: str | None = None) -> None:
        """The file could not be checked: `error` says why; nothing of it is changed or reported."""
        self.error = error
        self.traceback = tb
        self.new = self.old
        self.diagnostics = []


def one_line(error: BaseException) -> str:
    """An error's first line, for a message that stays on one line."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__

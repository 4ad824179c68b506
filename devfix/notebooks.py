"""Jupyter notebooks as one Python program, and that program's edits written back into the
notebook's own JSON text.

Why one program: a notebook's code cells run in order in one namespace, so a model built in
cell 3 and trained in cell 7 is one model. The engine analyses the joined program like any
`.py` file; this module only translates, both ways:

- `read` checks the file with nbformat (JSON, a notebook, nbformat 4, valid) and joins the
  code cells. Each cell is preceded by a marker comment (`# [devfix cell 7]`) and IPython
  syntax (`%matplotlib inline`, `!pip install`, `x?`, `files = !ls`, a `%%time` line) is
  replaced, line for line, by `pass  # [devfix magic 3]` at the line's indentation, so the
  program parses and every line keeps its place. A cell that cannot be parsed even so, or a
  cell magic whose body is not Python (`%%bash`, `%%writefile`), is left out of the program.
- `Notebook.write` cuts the edited program back at the markers, puts every magic back
  byte-for-byte, and rewrites only the JSON values of the cells whose source changed. Every
  other byte of the file (outputs, execution counts, metadata, attachments, indentation, key
  order, trailing newline) is copied from the original text, never re-serialised; a source
  stored as a list of lines stays a list, and its unchanged lines keep their exact JSON text.
  Edits that would move a marker or touch a magic are refused (NotebookError): the notebook
  is then left as it was.

No devfix import here: the engine uses this module, not the other way round.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from devfix.analysis.cells import CELL_MARK
from devfix.results import one_line

if TYPE_CHECKING:  # json.decoder's is _json's (or its pure-Python twin): only _json's is in the stubs
    from _json import scanstring
else:
    from json.decoder import scanstring

SUFFIX = ".ipynb"
_NAMES_CUDA = re.compile(r"\bcuda\b")
_DEFINED = re.compile(r"^[ \t]*def[ \t]+(\w+)", re.MULTILINE)
_CALLED = re.compile(r"(?<![\w.])(\w+)[ \t]*\(")
_CELL_MARK = re.compile(re.escape(CELL_MARK) + r"(\d+)\]\n")
_MAGIC_MARK = re.compile(r"([ \t]*)pass  # \[devfix magic (\d+)\](\r\n|\r|\n)?")
# IPython syntax that is a whole line: `%magic`, `!shell`, `?help`, `x = !cmd`, `x = %magic`.
_MAGIC_LINE = re.compile(r"[ \t]*(?:[%!?]|[A-Za-z_][\w.]*[ \t]*=[ \t]*[%!])")
_HELP_LINE = re.compile(r"[ \t]*\?{0,2}[\w.*\[\]()]+[ \t]*\?{1,2}[ \t]*(?:\r\n|\r|\n)?")
# Cell magics whose body is Python: the body is analysed, the `%%` line kept as it is.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """The file is not a notebook devfix can read, or the fixes cannot be written back."""


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def lines(text: str) -> list[str]:
    """`text` split as Python splits source lines (`\\n`, `\\r\\n`, `\\r`), ends kept."""
    return _LINE.findall(text)


@dataclass
class Cell:
    """One code cell: where its source lies in the file text, and how it entered the program."""

    number: int  # 1-based position among all the notebook's cells, as a reader counts them
    source: str
    span: tuple[int, int]  # the source's JSON value in the file text
    magics: dict[int, str] = field(default_factory=dict)  # magic id -> the original line
    placeholders: dict[int, str] = field(default_factory=dict)  # magic id -> the line standing for it
    skipped: str | None = None  # why the cell is not part of the program (None: it is)
    added_newline: bool = False  # the program ends the cell with a newline its source lacks
    indent: str = ""  # the indentation IPython strips from a cell indented as a whole
    dedented: list[str] = field(default_factory=list)  # with `indent`: the lines as the program holds them
    stripped: list[str] = field(default_factory=list)  # with `indent`: the original lines they stand for


@dataclass
class Notebook:
    text: str  # the file, decoded
    cells: list[Cell]
    program: str  # the code cells as one Python program
    where: list[tuple[int, int]]  # program line (0-based) -> (cell number, line in the cell)

    def position(self, line: int) -> tuple[int, int]:
        """(cell number, line in that cell) of the program's 1-based `line`."""
        if 1 <= line <= len(self.where):
            return self.where[line - 1]
        return (self.cells[-1].number if self.cells else 0), line

    def column(self, cell_number: int, column: int) -> int:
        """A program column in the cell's own text: a cell indented as a whole is held
        without its indentation."""
        cell = next((c for c in self.cells if c.number == cell_number), None)
        return column + len(cell.indent) if cell is not None else column

    def unparsed(self) -> list[tuple[int, str]]:
        """The cells left out of the program because they cannot be parsed: (number, why)."""
        return [
            (cell.number, cell.skipped)
            for cell in self.cells
            if cell.skipped and cell.skipped.startswith("cannot parse")
        ]

    def places_in_unparsed_cells(self) -> bool:
        """A cell devfix cannot read names CUDA (DiscoGAN's Python 2 cell builds the models and
        calls `.cuda()` on them) or calls a function of the cells it reads (EdGENetworks'
        Python 2 training loop, the only caller of the training step): the notebook's placement
        is partly where no analysis sees it, and whatever devfix does elsewhere, that cell runs
        as before, or not at all."""
        unparsed = {number for number, _ in self.unparsed()}
        read = [cell for cell in self.cells if cell.number not in unparsed]
        defined = {name for cell in read for name in _DEFINED.findall(cell.source)}
        return any(
            cell.number in unparsed
            and (_NAMES_CUDA.search(cell.source) or any(name in defined for name in _CALLED.findall(cell.source)))
            for cell in self.cells
        )

    def write(self, program: str) -> tuple[str, list[tuple[int, str, str]]]:
        """The file text with the edited `program`'s cells in it, and the cells that changed
        as (number, old source, new source). Raises NotebookError where the edits cannot be
        given back to cells exactly (a marker moved or lost, a magic changed)."""
        blocks = self._blocks(program)
        self._check_lines_stay(blocks)
        changed = []
        for cell in self.cells:
            new = self._source(cell, blocks[cell.number])
            if new != cell.source:
                changed.append((cell, new))
        if not changed:
            return self.text, []
        style = _Style.of(self.text)
        pieces, at = [], 0
        for cell, new in changed:
            start, end = cell.span
            pieces += [self.text[at:start], style.value(self.text, cell.span, new)]
            at = end
        pieces.append(self.text[at:])
        return "".join(pieces), [(cell.number, cell.source, new) for cell, new in changed]

    def _blocks(self, program: str) -> dict[int, list[str]]:
        """The program's lines cut at the cell markers, which must all be there, in order.
        Lines before the first marker (an import put at the top) open the first cell."""
        blocks: dict[int, list[str]] = {}
        current: list[str] = []
        leading = current
        order = []
        for line in lines(program):
            mark = _CELL_MARK.fullmatch(line)
            if mark:
                number = int(mark.group(1))
                order.append(number)
                current = blocks.setdefault(number, [])
                if len(order) == 1:
                    current.extend(leading)
                continue
            current.append(line)
        if order != [cell.number for cell in self.cells]:
            raise NotebookError(
                "the fixes cross a cell boundary and cannot be put back into the cells; notebook left unchanged"
            )
        return blocks

    def _check_lines_stay(self, blocks: dict[int, list[str]]) -> None:
        """Every line the fixes kept stays in its cell: a guard, should a fix ever carry a
        marker past kept lines (the comments of a removed statement go to the next one)."""
        old = [
            (line, cell) for line, (cell, _) in zip(lines(self.program), self.where) if not _CELL_MARK.fullmatch(line)
        ]
        new = [(line, cell.number) for cell in self.cells for line in blocks[cell.number]]
        matcher = difflib.SequenceMatcher(None, [line for line, _ in old], [line for line, _ in new], autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            if any(old[a + k][1] != new[b + k][1] for k in range(size)):
                raise NotebookError("the fixes would move a line from one cell to another; notebook left unchanged")

    @staticmethod
    def _source(cell: Cell, block: list[str]) -> str:
        if cell.skipped:
            if block:
                raise NotebookError(
                    f"a fix lands in cell {cell.number}, which devfix did not read; notebook left unchanged"
                )
            return cell.source
        restored, seen = [], []
        for line in block:
            magic = _MAGIC_MARK.fullmatch(line)
            if magic:
                key = int(magic.group(2))
                if cell.placeholders.get(key) != line:
                    raise NotebookError(f"a fix moved IPython syntax in cell {cell.number}; notebook left unchanged")
                seen.append(key)
                line = cell.magics[key]
            restored.append(line)
        if seen != sorted(cell.magics):
            raise NotebookError(f"a fix changed IPython syntax in cell {cell.number}; notebook left unchanged")
        if cell.indent:
            restored = _reindented(cell, restored)
        text = "".join(restored)
        if cell.added_newline and text.endswith("\n"):
            text = text[:-1]
        return text


def read(data: bytes) -> Notebook:
    """The notebook in `data` as one program. Raises NotebookError (with a one-line reason)
    for a file that is not UTF-8 JSON, not a notebook, not nbformat 4, or not valid."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotebookError("not a notebook: not UTF-8 text") from None
    _validate(text)
    try:
        cells = _code_cells(text)
    except (ValueError, IndexError, KeyError) as error:
        raise NotebookError(f"not a notebook: {error}") from None
    program: list[str] = []
    where: list[tuple[int, int]] = []
    for cell in cells:
        program.append(f"{CELL_MARK}{cell.number}]\n")
        where.append((cell.number, 0))
        body = _program_lines(cell)
        for number, line in enumerate(body, 1):
            program.append(line)
            where.append((cell.number, number))
    return Notebook(text, cells, "".join(program), where)


def _validate(text: str) -> None:
    """nbformat's own reader and schema: what Jupyter itself would refuse, devfix refuses."""
    import nbformat  # imported here: a run without notebooks never pays for it
    from nbformat.reader import NotJSONError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbformat warns about missing cell ids and the like
        try:
            notebook = nbformat.reader.reads(text)  # type: ignore[no-untyped-call]
        except NotJSONError:
            raise NotebookError(f"not a notebook: not valid JSON ({_json_error(text)})") from None
        except Exception as error:  # noqa: BLE001 - nbformat raises many kinds for non-notebooks
            raise NotebookError(f"not a notebook: {one_line(error)}") from None
        if not isinstance(notebook, dict) or "nbformat" not in notebook:
            raise NotebookError("not a notebook: JSON without a notebook's `nbformat` version")
        if notebook.get("nbformat") != 4:
            raise NotebookError(
                f"not a notebook devfix reads: nbformat {notebook.get('nbformat')} (devfix reads nbformat 4; "
                "`jupyter nbconvert --to notebook` upgrades it)"
            )
        language = _language(notebook.get("metadata"))
        if language not in (None, "python"):
            raise NotebookError(f"not a Python notebook (its kernel runs {language})")
        try:
            nbformat.validate(notebook)
        except nbformat.ValidationError as error:
            raise NotebookError(f"not a valid notebook: {one_line(error)}") from None


def _language(metadata: object) -> str | None:
    """The kernel's language, where the notebook says (Jupyter writes both places)."""
    if not isinstance(metadata, dict):
        return None
    for key, field_name in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        language = value.get(field_name) if isinstance(value, dict) else None
        if isinstance(language, str):
            return language.lower()
    return None


def _json_error(text: str) -> str:
    try:
        json.loads(text)
    except ValueError as error:
        return str(error)
    return "not an object"


def _code_cells(text: str) -> list[Cell]:
    """The code cells, found in the text itself (so their sources can be replaced in place)."""
    start = _skip(text, 0)
    top = {key: (a, b) for key, a, b in _members(text, start)}
    a, _b = top["cells"]
    cells = []
    for number, (cell_start, _cell_end) in enumerate(_elements(text, a), 1):
        members = {key: (x, y) for key, x, y in _members(text, cell_start)}
        kind = _DECODER.raw_decode(text, members["cell_type"][0])[0]
        if kind != "code":
            continue
        span = members["source"]
        value = _DECODER.raw_decode(text, span[0])[0]
        source = value if isinstance(value, str) else "".join(value)
        cells.append(Cell(number, source, span))
    return cells


def _skip(text: str, at: int) -> int:
    found = _WHITESPACE.match(text, at)
    assert found is not None  # the pattern matches the empty string
    return found.end()


def _members(text: str, at: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object starting at `at`."""
    if text[at] != "{":
        raise ValueError("expected an object")
    at = _skip(text, at + 1)
    if text[at] == "}":
        return
    while True:
        key, at = scanstring(text, at + 1)
        at = _skip(text, at)
        at = _skip(text, at + 1)  # the colon
        end = _DECODER.raw_decode(text, at)[1]
        yield key, at, end
        at = _skip(text, end)
        if text[at] == "}":
            return
        at = _skip(text, at + 1)  # the comma


def _elements(text: str, at: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each value of the JSON array starting at `at`."""
    if text[at] != "[":
        raise ValueError("expected an array")
    at = _skip(text, at + 1)
    if text[at] == "]":
        return
    while True:
        end = _DECODER.raw_decode(text, at)[1]
        yield at, end
        at = _skip(text, end)
        if text[at] == "]":
            return
        at = _skip(text, at + 1)


def _program_lines(cell: Cell) -> list[str]:
    """The cell's lines as the program holds them: IPython syntax replaced by placeholders of
    the same line count; nothing for a cell that is not Python. Sets `cell.magics`,
    `cell.skipped` and `cell.added_newline`."""
    original = lines(cell.source)
    if not original:
        return []
    if original[-1][-1:] not in ("\n", "\r"):
        original[-1] += "\n"
        cell.added_newline = True
    original = _dedented(cell, original)
    first = original[0].strip()
    if first.startswith("%%"):
        if first[2:].split(" ")[0] not in PYTHON_CELL_MAGICS:
            cell.skipped = f"cell magic {first.split()[0]}: not Python"
            return []
    elif _parses("".join(original)) is None:
        return original  # plain Python: a `%` or `?` inside it belongs to the code
    converted = []
    continued = None  # the indentation of a magic continued with a backslash
    for index, line in enumerate(original):
        is_magic = (
            continued is not None
            or (index == 0 and first.startswith("%%"))
            or (
                (_MAGIC_LINE.match(line) is not None or _HELP_LINE.fullmatch(line) is not None)
                and not line.lstrip().startswith("#")
            )
        )
        if not is_magic:
            converted.append(line)
            continue
        key = len(cell.magics)
        cell.magics[key] = line
        indent = continued if continued is not None else _indent(line)
        ending = line[len(line.rstrip("\r\n")) :]
        cell.placeholders[key] = f"{indent}pass  # [devfix magic {key}]{ending}"
        converted.append(cell.placeholders[key])
        continued = indent if line.rstrip("\r\n").endswith("\\") else None
    problem = _parses("".join(converted))
    if problem is not None:
        cell.skipped = f"cannot parse: {problem}"
        cell.magics, cell.placeholders = {}, {}
        return []
    return converted


def _dedented(cell: Cell, original: list[str]) -> list[str]:
    """A cell whose first line is indented is run by IPython with that indentation removed
    from every line that has it (its `leading_indent` step): the program holds it so, and
    `cell.indent` gives it back on write."""
    indent = _indent(original[0])
    if not indent or original[0].strip() == "" or _parses("".join(original)) is None:
        return original
    dedented = [line[len(indent) :] if line.startswith(indent) else line for line in original]
    cell.indent, cell.dedented, cell.stripped = indent, dedented, list(original)
    return dedented


def _reindented(cell: Cell, block: list[str]) -> list[str]:
    """The cell's program lines with its indentation given back: a line the fixes kept is its
    original line, byte for byte; a line they wrote gets the cell's indentation."""
    matcher = difflib.SequenceMatcher(None, cell.dedented, block, autojunk=False)
    kept = {b + k: a + k for a, b, size in matcher.get_matching_blocks() for k in range(size)}
    return [
        cell.stripped[kept[i]] if i in kept else (cell.indent + line if line.strip() else line)
        for i, line in enumerate(block)
    ]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _parses(source: str) -> str | None:
    """None if `source` parses as Python, else CPython's one-line reason."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(source)
        except SyntaxError as error:
            return f"{error.msg} (line {error.lineno})" if error.lineno else str(error.msg)
        except Exception as error:  # noqa: BLE001 - NUL bytes, too deep
            return one_line(error)
    return None


@dataclass(frozen=True)
class _Style:
    """How the file writes strings: nbformat's default keeps non-ASCII text as it is; some
    writers escape it (`ensure_ascii`)."""

    ascii_only: bool

    @classmethod
    def of(cls, text: str) -> _Style:
        raw = any(ord(c) > 127 for c in text)
        escaped = re.search(
            r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F][0-9a-fA-F]{2}|[1-9a-fA-F][0-9a-fA-F]{3})", text
        )
        return cls(ascii_only=bool(escaped) and not raw)

    def string(self, value: str) -> str:
        return json.dumps(value, ensure_ascii=self.ascii_only)

    def value(self, text: str, span: tuple[int, int], source: str) -> str:
        """The JSON text of `source` in place of the value at `span`, in that value's form: one
        string, or a list of lines whose unchanged lines keep their exact text and whose
        layout (the whitespace around and between lines) is the old list's."""
        start, end = span
        if text[start] == '"':
            return self.string(source)
        old = list(_elements(text, start))
        new_lines = lines(source)
        if not old:
            return "[" + ", ".join(self.string(line) for line in new_lines) + "]"
        old_lines = [_DECODER.raw_decode(text, a)[0] for a, _ in old]
        raw = [text[a:b] for a, b in old]
        opening = text[start + 1 : old[0][0]]
        between = text[old[0][1] : old[1][0]] if len(old) > 1 else "," + opening
        closing = text[old[-1][1] : end - 1]
        written = []
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            if tag == "equal":
                written += raw[a1:a2]
            else:
                written += [self.string(line) for line in new_lines[b1:b2]]
        if not written:
            return "[]"
        return "[" + opening + between.join(written) + closing + "]"

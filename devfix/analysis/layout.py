"""Where a file's nodes are in its text, and a fixed file's text, without generating the
whole module's code where the file's own text can stand in for it.

LibCST knows a node's position only by generating the code before it. Generating a whole
module costs about a third of its parse, once for the positions of the findings and once
more for the fixed file. CPython's parser (run on every file as the nesting guard) gives the
line of each top-level statement, so only the statements that hold a reported node are
generated for positions, and only the edited ones for the fixed file; everything else is
copied from the original text. Each statement generated is compared with the text at the
place computed for it: where one differs (a file LibCST does not reproduce byte for byte, a
decorator split over lines), the whole module is generated, as before.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")  # what LibCST's PositionProvider counts as a line break


@dataclass(frozen=True)
class Original:
    """The bytes a module was parsed from, and CPython's first line of each of its top-level
    statements (a decorated definition's first decorator), in order."""

    source: bytes
    first_lines: tuple[int, ...]


@dataclass
class _Starts(CodegenState):
    """A code generation that records where each node starts, as a character offset, by the
    rules of LibCST's PositionProvider (the syntactic start where the node reports one, else
    where its code starts), at a fraction of its cost: the provider builds two position
    objects per node and splits every token on newlines, which costs twice the parse."""

    offset: int = 0
    offsets: dict[int, int] = field(default_factory=dict)  # id(node) -> start offset
    _stack: list[int] = field(default_factory=list)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        self.offsets.setdefault(id(node), start)  # a syntactic start, recorded first, wins

    @contextmanager
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            self.offsets[id(node)] = self.offsets[id(start_node)] if start_node is not None else start

    def generate(self, node: cst.CSTNode, at: int) -> str:
        """`node`'s code, its nodes' offsets counted from `at`."""
        self.tokens = []
        self.offset = at
        node._codegen(self)
        return "".join(self.tokens)


class Layout:
    """Offsets of a module's nodes in its text, and the text of a module made from it by edits."""

    def __init__(self, module: cst.Module, original: Original | None = None) -> None:
        self.module = module
        self.original = original if original is not None and _usable(module, original) else None
        self._whole: tuple[str, _Starts, list[int]] | None = None  # text, offsets, line ends
        self._parts = _Starts(default_indent=module.default_indent, default_newline=module.default_newline)
        self._placed: dict[int, tuple[int, int]] = {}  # id(top-level statement) -> (start, length), checked

    # -- the original text -----------------------------------------------------------------------
    @cached_property
    def _text(self) -> str:
        assert self.original is not None
        return self.original.source.decode(self.module.encoding)

    @cached_property
    def _line_ends(self) -> list[int]:
        return [match.end() for match in _NEWLINE.finditer(self._text)]

    @cached_property
    def _starts(self) -> dict[int, int] | None:
        """id(top-level statement) -> the offset where its code (its leading lines first)
        begins, by CPython's lines; None where the two parsers disagree on the statements."""
        assert self.original is not None
        lines = self.original.first_lines
        line_starts = [0, *self._line_ends]
        starts: dict[int, int] = {}
        index = 0
        for statement in self.module.body:
            if index >= len(lines):
                return None
            first = lines[index] - len(statement.leading_lines)
            if not 1 <= first <= len(line_starts):
                return None
            starts[id(statement)] = line_starts[first - 1]
            index += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        return starts if index == len(lines) else None

    def whole_text(self) -> str:
        """The module's code, as `Module.code` generates it."""
        return self._generate_whole()[0]

    # -- positions -------------------------------------------------------------------------------
    def position(self, node: cst.CSTNode, ancestors: Sequence[cst.CSTNode]) -> tuple[int, int]:
        """1-based line and column of `node` (its `ancestors` innermost first), where LibCST's
        PositionProvider starts it."""
        offsets, line_ends = self._offsets_for(ancestors[-2] if len(ancestors) > 1 else node)
        found = offsets.get(id(node))
        if found is None:
            found = next((offsets[id(a)] for a in ancestors if id(a) in offsets), None)
        if found is None:
            return (1, 1)
        line = bisect_right(line_ends, found)  # the newlines before the node
        column = found - line_ends[line - 1] if line else found
        return (line + 1, column + 1)

    def _offsets_for(self, top: cst.CSTNode) -> tuple[dict[int, int], list[int]]:
        """The offsets of the nodes of the top-level statement `top`: from generating that
        statement alone where the original text places it, else from the whole module."""
        if self._whole is None and self.original is not None and self._place(top) is not None:
            return self._parts.offsets, self._line_ends
        _, starts, line_ends = self._generate_whole()
        return starts.offsets, line_ends

    def _place(self, statement: cst.CSTNode) -> tuple[int, int] | None:
        """(offset, length) of a top-level statement's code in the original text, checked by
        generating it; None (and no original from then on) where the text differs."""
        placed = self._placed.get(id(statement))
        if placed is not None:
            return placed
        starts = self._starts if self.original is not None else None
        if starts is None:
            self.original = None
            return None
        start = starts.get(id(statement))
        if start is None:
            return None  # the module itself, a header or footer line: generated whole
        code = self._parts.generate(statement, start)
        if not self._text.startswith(code, start):
            self.original = None
            return None
        self._placed[id(statement)] = (start, len(code))
        return self._placed[id(statement)]

    def _generate_whole(self) -> tuple[str, _Starts, list[int]]:
        if self._whole is None:
            state = _Starts(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
            self.module._codegen(state)
            text = "".join(state.tokens)
            self._whole = (text, state, [match.end() for match in _NEWLINE.finditer(text)])
        return self._whole

    # -- a fixed module's text -------------------------------------------------------------------
    def fixed_text(self, new: cst.Module) -> str | None:
        """The code of `new` (this module with some top-level statements replaced, removed or
        added): the original text where `new` keeps the original statement, generated code
        where it does not. None where that cannot be shown to equal `new.code`."""
        old = self.module
        if self.original is None or not _same_frame(old, new):
            return None
        index = {id(statement): i for i, statement in enumerate(old.body)}
        pieces: list[str] = []
        copied = 0  # the original text up to here is in pieces, or replaced
        following = 0  # the first original statement not yet kept or replaced
        pending: list[cst.CSTNode] = []
        for statement in [*new.body, None]:
            kept = len(old.body) if statement is None else index.get(id(statement))
            if kept is None:
                pending.append(statement)  # type: ignore[arg-type]  # not None here
                continue
            if kept < following:
                return None  # an original statement moved back: not a splice
            if pending or kept > following:
                span = self._span(following, kept)
                if span is None:
                    return None
                pieces.append(self._text[copied : span[0]])
                pieces.extend(new.code_for_node(added) for added in pending)
                copied = span[1]
                pending = []
            following = kept + 1
        pieces.append(self._text[copied:])
        return "".join(pieces)

    def _span(self, first: int, end: int) -> tuple[int, int] | None:
        """The text of the original statements first..end-1 (start, end offsets); for none
        (an insertion), the empty span where statement `first` begins, or where the last ends."""
        body = self.module.body
        if first < end:
            places = [self._place(body[i]) for i in range(first, end)]
            if any(place is None for place in places):
                return None
            start = places[0][0]  # type: ignore[index]
            last = places[-1]
            return start, last[0] + last[1]  # type: ignore[index]
        if first < len(body):
            place = self._place(body[first])
            return (place[0], place[0]) if place is not None else None
        if not body:
            return None
        place = self._place(body[-1])
        return (place[0] + place[1], place[0] + place[1]) if place is not None else None


def _usable(module: cst.Module, original: Original) -> bool:
    """A text the statements can be placed in: no byte order mark (LibCST's text does not hold
    it). A file without a final newline is one too: LibCST adds one to the last statement it
    generates, which `_place` then finds differs from the text, so only that statement is not
    placed; the others are copied, with the lines LibCST loses after the last one (comments
    indented deeper than the module, at its end)."""
    return not original.source.startswith(b"\xef\xbb\xbf")


def _same_frame(old: cst.Module, new: cst.Module) -> bool:
    """`new` differs from `old` in its statements only: the same header and footer lines (the
    same objects) and the same code style."""
    return (
        _same_nodes(old.header, new.header)
        and _same_nodes(old.footer, new.footer)
        and (old.encoding, old.default_indent, old.default_newline, old.has_trailing_newline)
        == (new.encoding, new.default_indent, new.default_newline, new.has_trailing_newline)
    )


def _same_nodes(first: Sequence[cst.CSTNode], second: Sequence[cst.CSTNode]) -> bool:
    return len(first) == len(second) and all(a is b for a, b in zip(first, second))

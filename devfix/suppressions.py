"""Inline suppressions: the comments a user writes to silence one deliberate finding.

- `# devfix: ignore` on a line silences every rule there; `# devfix: ignore[DEV004, DEV005]`
  only those rules. `# noqa: DEV004` is read the same way (only its DEV codes count; a bare
  `# noqa` is left to the linters it was written for).
- `# devfix: skip-file` on a line of its own leaves the whole file alone.
- A comment that says the code fails on purpose (`# this will break!`, `# If tensor is on
  GPU, can't transform it to NumPy (this will error)`), at the end of a line or on the line
  above it, marks a demonstration of the error a tutorial is teaching: that line is left alone
  as if it were suppressed (and is never reported as an unused suppression).

A suppressed finding is neither reported nor fixed. Comments are found with `tokenize`, so
the same text inside a string never counts.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

ALL = frozenset({"*"})
_IGNORE = re.compile(r"#\s*devfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
_SKIP_FILE = re.compile(r"^#\s*devfix:\s*skip-file\s*$", re.IGNORECASE)
_CODE = re.compile(r"^DEV[0-9]{3}$")
_FAILS_ON_PURPOSE = (
    r"\bthis\s+(?:will|is\s+meant\s+to|is\s+going\s+to|should)\s+(?:error|break|fail|crash|raise)\b"
    r"|\(\s*will\s+(?:error|break|fail|crash)\s*\)"
)
_INTENDED = re.compile(_FAILS_ON_PURPOSE, re.IGNORECASE)
_INTENDED_BYTES = re.compile(_FAILS_ON_PURPOSE.encode(), re.IGNORECASE)
_NOT_CODE = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})


@dataclass
class Suppressions:
    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    skip_file: bool = False
    columns: dict[int, int] = field(default_factory=dict)  # line -> 1-based column of its (first) suppression comment
    intended: set[int] = field(default_factory=set)  # lines whose comment says they fail on purpose

    def silences(self, line: int, code: str) -> bool:
        if line in self.intended:
            return True
        codes = self.by_line.get(line)
        return codes is not None and (codes is ALL or code in codes)


def read(source: bytes) -> Suppressions:
    """The file's suppression comments (none when it cannot be tokenized: the parser says why)."""
    found = Suppressions()
    if b"devfix" not in source and b"noqa" not in source.lower() and not _INTENDED_BYTES.search(source):
        return found
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return found
    for index, token in enumerate(tokens):
        if token.type != tokenize.COMMENT:
            continue
        text = token.string
        if _INTENDED.search(text):
            found.intended.add(_commented_line(tokens, index))
        if _SKIP_FILE.match(text) and not token.line[: token.start[1]].strip():
            found.skip_file = True
            continue
        codes = _codes(text)
        if codes is not None:
            line = token.start[0]
            found.columns.setdefault(line, token.start[1] + 1)
            previous = found.by_line.get(line, frozenset())
            found.by_line[line] = ALL if codes is ALL or previous is ALL else previous | codes
    return found


def _commented_line(tokens: list[tokenize.TokenInfo], index: int) -> int:
    """The line a comment speaks of: its own, after code; else the next line that holds code."""
    comment = tokens[index]
    if comment.line[: comment.start[1]].strip():
        return comment.start[0]
    following = (token for token in tokens[index + 1 :] if token.type not in _NOT_CODE)
    return next((token.start[0] for token in following if token.type != tokenize.ENDMARKER), comment.start[0])


def _codes(comment: str) -> frozenset[str] | None:
    match = _IGNORE.search(comment)
    if match:
        if match.group("codes") is None:
            return ALL
        return frozenset(c.strip().upper() for c in match.group("codes").split(",") if c.strip())
    match = _NOQA.search(comment)
    if match:
        codes = frozenset(c.upper() for c in re.split(r"[\s,]+", match.group("codes")) if _CODE.match(c.upper()))
        return codes or None
    return None


def audit(
    found: Suppressions,
    used: set[tuple[int, str]],
    known: Collection[str],
    enabled: Collection[str],
    all_rules_ran: bool,
) -> list[tuple[int, int, str]]:
    """The suppressions that silence nothing, as (line, column, message): an unknown code
    (`ignore[DEV999]`, a typo that silences nothing ever), or a code of a rule that ran and
    found nothing on that line (the code was fixed, or moved: the comment is stale and would
    hide a new finding there). A code whose rule did not run (`--select`, `ignore`) is not
    judged; a bare `# devfix: ignore` only when every rule on by default ran."""
    notes = []
    for line, codes in sorted(found.by_line.items()):
        column = found.columns.get(line, 1)
        if codes is ALL:
            if all_rules_ran and not any(at == line for at, _ in used):
                notes.append((line, column, "unused suppression: `# devfix: ignore` silences nothing on this line"))
            continue
        unknown = sorted(code for code in codes if code not in known)
        if unknown:
            notes.append(
                (
                    line,
                    column,
                    f"unknown rule code{'s' * (len(unknown) > 1)} {', '.join(unknown)} in a suppression; `devfix rules` lists them",
                )
            )
        unused = sorted(code for code in codes if code in known and code in enabled and (line, code) not in used)
        if unused:
            notes.append((line, column, f"unused suppression: {', '.join(unused)} found nothing on this line"))
    return notes


def add_ignores(source: bytes, wanted: Mapping[int, Iterable[str]]) -> tuple[bytes, list[int]]:
    """`source` with `# devfix: ignore[CODES]` at the end of each line of `wanted` (line ->
    codes), merged into a devfix comment already there; and the lines where no comment can
    go (the line ends inside a string or continues with a backslash), left as they were.

    `devfix add-ignore` (ruff's --add-noqa): silence what is found today, so a migration can
    adopt devfix and have CI check only new code. Bytes in, bytes out: the file's encoding
    and line endings are kept."""
    if not wanted:
        return source, []
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return source, sorted(wanted)
    encoding = tokens[0].string if tokens and tokens[0].type == tokenize.ENCODING else "utf-8"
    comments: dict[int, tokenize.TokenInfo] = {}
    ends_in_token: set[int] = set()  # lines a multi-line token (a string) runs through or ends on mid-line
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token
        if token.start[0] != token.end[0]:
            ends_in_token.update(range(token.start[0], token.end[0]))
    lines = source.splitlines(keepends=True)
    refused = []
    for number in sorted(wanted):
        codes = sorted(set(wanted[number]))
        if not 1 <= number <= len(lines) or number in ends_in_token:
            refused.append(number)
            continue
        text = lines[number - 1]
        body = text.rstrip(b"\r\n")
        ending = text[len(body) :]
        if body.rstrip().endswith(b"\\"):
            refused.append(number)
            continue
        comment = comments.get(number)
        if comment is not None and _IGNORE.search(comment.string):
            present = _codes(comment.string)
            if present is ALL:
                continue
            merged = sorted(set(present or ()) | set(codes))
            new_comment = _IGNORE.sub(f"# devfix: ignore[{', '.join(merged)}]", comment.string, count=1)
            body = body.replace(comment.string.encode(encoding), new_comment.encode(encoding), 1)
        else:
            body = body.rstrip() + f"  # devfix: ignore[{', '.join(codes)}]".encode(encoding)
        lines[number - 1] = body + ending
    return b"".join(lines), refused

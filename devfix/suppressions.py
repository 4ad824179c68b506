"""Inline suppressions: the comments a user writes to silence one deliberate finding.

- `# devfix: ignore` on a line silences every rule there; `# devfix: ignore[DEV004, DEV005]`
  only those rules. `# noqa: DEV004` is read the same way (only its DEV codes count; a bare
  `# noqa` is left to the linters it was written for).
- `# devfix: skip-file` on a line of its own leaves the whole file alone.

A suppressed finding is neither reported nor fixed. Comments are found with `tokenize`, so
the same text inside a string never counts.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Optional

ALL = frozenset({"*"})
_IGNORE = re.compile(r"#\s*devfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)
_SKIP_FILE = re.compile(r"^#\s*devfix:\s*skip-file\s*$", re.IGNORECASE)
_CODE = re.compile(r"^DEV[0-9]{3}$")


@dataclass
class Suppressions:
    by_line: Dict[int, FrozenSet[str]] = field(default_factory=dict)
    skip_file: bool = False

    def silences(self, line: int, code: str) -> bool:
        codes = self.by_line.get(line)
        return codes is not None and (codes is ALL or code in codes)


def read(source: bytes) -> Suppressions:
    """The file's suppression comments (none when it cannot be tokenized: the parser says why)."""
    found = Suppressions()
    if b"devfix" not in source and b"noqa" not in source.lower():
        return found
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return found
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        text = token.string
        if _SKIP_FILE.match(text) and not token.line[:token.start[1]].strip():
            found.skip_file = True
            continue
        codes = _codes(text)
        if codes is not None:
            line = token.start[0]
            previous = found.by_line.get(line, frozenset())
            found.by_line[line] = ALL if codes is ALL or previous is ALL else previous | codes
    return found


def _codes(comment: str) -> Optional[FrozenSet[str]]:
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

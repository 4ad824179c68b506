"""What every caller of a script's function passes it, from a scan of the run's text.

A parameter that no call in the run fills keeps its default:

    def visualize_results(self, epoch, fix=True):
        if fix:
            z = self.sample_z_
        else:
            z = torch.rand(...).cuda()     # never runs: every caller leaves `fix` alone

The scan is only trusted for the functions project.py lists as a script's own (top-level
functions and methods of plain classes, in a folder that is not a package, in a file that
looks nothing up by a computed name): for those, each use of the name is one the scan can
see. Any use that is not a plain call (`callback=self.visualize`, a string, `*args`) makes
the function's callers unknown, and nothing is claimed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")  # a name, as the project's text scans read one
COMMENT = re.compile(rb"#[^\r\n]*")
# Comments and string literals, left to right (so that a quote inside a string or a comment
# opens nothing): what `code_words` leaves out of the words it counts.
_COMMENT_OR_STRING = re.compile(rb"#[^\r\n]*|('''|\"\"\")[\s\S]*?\1|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"")
_LINE_OPENING = re.compile(rb"[ \t]*[rRbBuU]{0,2}\Z")
_F_PREFIX = re.compile(rb"(?:[fF][rR]?|[rR][fF])\Z")  # the letters before a string's quote: an f-string


def code_words(data: bytes) -> bytes:
    """`data` without its comments, its line-opening triple-quoted strings and its one-line
    strings with a space in them: a docstring, code "commented out" by quoting it (a
    `test_model(...)` call left in a `\"\"\"` block after a training loop), a message
    (`print("TTS synthesis")`, which names no function `synthesis`). What a program looks up
    by name is a short string without spaces inside an expression (`getattr(m, "train")`),
    never such a block, and it is kept; so is an f-string, which holds code."""
    if b"'" not in data and b'"' not in data:
        return COMMENT.sub(b"", data)

    def drop(match: re.Match[bytes]) -> bytes:
        text = match.group(0)
        if text.startswith(b"#"):
            return b""
        if match.group(1) is not None:
            line_start = data.rfind(b"\n", 0, match.start()) + 1
            if _LINE_OPENING.match(data, line_start, match.start()):
                return b""
        elif b" " in text and not _F_PREFIX.search(data, max(0, match.start() - 2), match.start()):
            return text[:1] * 2
        return text

    return _COMMENT_OR_STRING.sub(drop, data)


_KEYWORD = re.compile(rb"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")
_STRING = re.compile(rb"'''.*?'''|\"\"\".*?\"\"\"|'[^'\n]*'|\"[^\"\n]*\"", re.DOTALL)

# What the calls of one name pass: the most positional arguments any call passes, and every
# keyword any call names.
Passed = tuple[int, frozenset[str]]


def passed_arguments(files: Iterable[tuple[str, bytes]], names: frozenset[bytes]) -> dict[bytes, Passed]:
    """For each of `names` whose every use in the run is `def name` or a call `name(...)`
    with plain arguments: what its calls pass."""
    positional: dict[bytes, int] = dict.fromkeys(names, 0)
    keywords: dict[bytes, set[str]] = {name: set() for name in names}
    unknown: set[bytes] = set()
    for _, data in files:
        code = COMMENT.sub(b"", data)
        for match in WORD.finditer(code):
            name = match.group(0)
            if name not in positional or name in unknown:
                continue
            if code[max(0, match.start() - 4) : match.start()].rstrip().endswith(b"def"):
                continue  # its definition
            arguments = _call_arguments(code, match.end())
            if arguments is None:
                unknown.add(name)
                continue
            count = 0
            for argument in arguments:
                keyword = _KEYWORD.match(argument)
                if argument.lstrip().startswith(b"*"):
                    unknown.add(name)  # `*args`, `**kwargs`: anything may be passed
                elif keyword:
                    keywords[name].add(keyword.group(1).decode("ascii", "replace"))
                else:
                    count += 1
            positional[name] = max(positional[name], count)
    return {name: (positional[name], frozenset(keywords[name])) for name in names if name not in unknown}


def _call_arguments(code: bytes, end: int) -> list[bytes] | None:
    """The top-level arguments of the call whose callee name ends at `end`, or None when the
    name is not called there (or the call cannot be read plainly)."""
    index = end
    while index < len(code) and code[index : index + 1] in (b" ", b"\t"):
        index += 1
    if code[index : index + 1] != b"(":
        return None
    depth, start, parts = 0, index + 1, []
    position = index
    while position < len(code):
        if code[position : position + 1] in (b"'", b'"'):
            string = _STRING.match(code, position)
            if string is None:
                return None
            position = string.end()
            continue
        char = code[position : position + 1]
        if char in (b"(", b"[", b"{"):
            depth += 1
        elif char in (b")", b"]", b"}"):
            depth -= 1
            if depth == 0:
                parts.append(code[start:position])
                return [part for part in parts if part.strip()]
        elif char == b"," and depth == 1:
            parts.append(code[start:position])
            start = position + 1
        position += 1
    return None


def kept_defaults(params: list[tuple[str, bool, bool | None]], passed: Passed | None) -> dict[str, bool]:
    """The parameters (name, positional?, constant default or None) that keep their `True`
    or `False` default at every call, with that default."""
    if passed is None:
        return {}
    count, keywords = passed
    kept: dict[str, bool] = {}
    for position, (name, is_positional, default) in enumerate(params):
        if default is None or name in keywords or (is_positional and position < count):
            continue
        kept[name] = default
    return kept

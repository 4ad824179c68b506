"""What a file's text shows without a parse: its top-level definitions, its methods and their
classes, and whether it looks names up at run time.

The run's text scans (project.py, unused.py) and the engine read these before any file is
parsed; they over-approximate on purpose (a name is known by its spelling) and only ever
keep devfix from an edit.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from devfix.analysis.callers import COMMENT

INDENTED_DEF = re.compile(rb"^([ \t]+)(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)


TOP_LINE = re.compile(rb"^[^ \t\n\x0b\x0c#][^\n]*", re.MULTILINE)  # not blank, not indented, not a comment


TOP_NAME = re.compile(rb"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)


TOP_DEF = re.compile(rb"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)


CLASS = re.compile(rb"class[ \t]+(\w+)[ \t]*(?:\(([^()]*)\))?[ \t]*:")


TOP_CLASS = re.compile(rb"^class[ \t]+(\w+)[ \t]*(?:\(([^()]*)\))?[ \t]*:", re.MULTILINE)


MODULE_BASES = frozenset({b"nn.Module", b"torch.nn.Module", b"Module"})


# A file that reaches its functions by a name computed at run time: `fire.Fire()` makes each a
# command, `globals()[name]`, `eval(...)`, `getattr(sys.modules[__name__], name)`.
_DYNAMIC_LOOKUP = re.compile(
    rb"\bFire\(|(?<![\w.])(?:globals|locals|eval|exec)\(|(?<![\w.])vars\(\s*\)|sys\.modules\[__name__\]"
)  # `vars(args)` reads an object's attributes; only a bare `vars()` is the namespace


_DYNAMIC_TEXT = (b"Fire(", b"globals(", b"locals(", b"vars(", b"eval(", b"exec(", b"sys.modules[__name__]")


def looks_up_by_name(data: bytes) -> bool:
    """_DYNAMIC_LOOKUP, with a plain substring test first: the regex tries its alternatives at
    every position of every file, and most files contain none of the words. An `eval` of a
    name that starts inside another module (CCNet's `eval('networks.' + args.model +
    '.Seg_Model')`) finds nothing of the file's own."""
    if not any(text in data for text in _DYNAMIC_TEXT):
        return False
    return any(not _reads_a_module(data, match) for match in _DYNAMIC_LOOKUP.finditer(data))


def _reads_a_module(data: bytes, match: re.Match[bytes]) -> bool:
    return match.group() == b"eval(" and _IN_A_MODULE.match(data, match.end()) is not None


# What follows `eval(` when the name it builds starts with a module's: `'networks.' + ...`.
_IN_A_MODULE = re.compile(rb"""\s*(['"])[A-Za-z_][\w.]*\.\1\s*\+""")


def has_notebook(files: list[tuple[str, bytes]]) -> bool:
    """A notebook is in the run: nothing imports it, so its own text shows every use."""
    return any(path.endswith(".ipynb") for path, _ in files)


def top_level_names(data: bytes) -> set[bytes]:
    """The names of the file's top-level `def` and `class` statements, read off its text."""
    return set(TOP_NAME.findall(data))


def named_in_own_file(data: bytes, name: str) -> bool:
    """The file writes `name` outside its own top-level `def`/`class` block (a call of it from
    another function, a `__main__` block): a use of it in this file."""
    token = name.encode()
    word = re.compile(rb"\b" + re.escape(token) + rb"\b")
    inside = False
    for line in COMMENT.sub(b"", data).splitlines():
        if line[:1].strip():
            match = TOP_NAME.match(line)
            inside = match is not None and match.group(1) == token
            if inside:
                continue
        if not inside and word.search(line):
            return True
    return False


def indented_defs(data: bytes) -> list[tuple[bytes, bytes | None]]:
    """Every indented `def` of the file with the top-level class it is a method of, or None (a
    function nested in a function or a method, a method of a nested class). The owner of an
    indented `def` is the last top-level line above it, and a method sits at the indentation of
    that class's first `def` (the regexes read the whole file at once: most of its lines are
    never looked at in Python)."""
    text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # lines as `splitlines` cuts them
    tops = [(match.start(), match.group(0)) for match in TOP_LINE.finditer(text)]
    starts = [start for start, _ in tops]
    indents: dict[int, bytes] = {}  # top-level line -> the indentation of the first def below it
    found: list[tuple[bytes, bytes | None]] = []
    for match in INDENTED_DEF.finditer(text):
        above = bisect_right(starts, match.start()) - 1
        head = CLASS.match(tops[above][1]) if above >= 0 else None
        if head is None:
            found.append((match.group(2), None))
            continue
        indent = indents.setdefault(above, match.group(1))
        found.append((match.group(2), head.group(1) if match.group(1) == indent else None))
    return found


def top_level_defs(data: bytes) -> list[bytes]:
    """The names of the file's top-level functions."""
    return TOP_DEF.findall(data)

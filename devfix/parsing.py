"""Parsing a file the way devfix may edit it, and proving a fixed file still parses.

One place decides whether a file is read at all: CPython's parser first (cheap, bounds
nesting, the better syntax-error message), then LibCST's (the tree devfix edits). A file
either parser rejects is reported with one line saying why and is never changed.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

from devfix.analysis.layout import Original
from devfix.results import one_line

# LibCST's native parser and its recursive code generator fail badly on absurdly deep or long
# expressions (a 4000-term `a + a + ...` takes seconds, 8000 terms crash the process) and the
# recursive visitors hit Python's recursion limit from about 400 levels. Real code nests a few
# dozen levels; files beyond this bound are reported and skipped, never parsed.
MAX_NESTING = 300
TOO_DEEP = f"skipped: nested or chained more deeply than devfix can handle (over {MAX_NESTING} levels)"


class ParseFailure(Exception):
    """Why a file is not analysed; `python_error` is set when CPython rejects it too (importing
    it fails on every machine)."""

    def __init__(self, message: str, python_error: bool) -> None:
        super().__init__(message)
        self.python_error = python_error


def parse(source: bytes) -> tuple[cst.Module, Original | None]:
    """The LibCST tree of `source`, and where CPython parsed it too, the first line of each
    top-level statement by CPython (positions and fixed files then come from the text, and the
    fixed file is checked with CPython's parser, a tenth of LibCST's cost); raises ParseFailure."""
    problem, python_error, first_lines = _precheck(source)
    cpython = first_lines is not None
    if problem:
        raise ParseFailure(problem, python_error=False)
    try:
        module = cst.parse_module(source)
    except Exception as error:  # noqa: BLE001 - syntax errors, undecodable bytes, parser failures
        message = f"cannot parse: {python_error or _parser_message(error)}"
        if cpython:
            message += f" ({_only_libcst_fails(source)})"
        raise ParseFailure(message, python_error=python_error is not None) from None
    return module, Original(source, first_lines) if first_lines is not None else None


def _precheck(source: bytes) -> tuple[str | None, str | None, tuple[int, ...] | None]:
    """CPython's own parser as a cheap guard: (reason to skip the file, CPython's syntax error,
    the first line of each top-level statement where CPython parsed it).

    CPython bounds nesting itself and fails cleanly where LibCST may crash the process, so
    its verdict on depth is taken first. A plain syntax error is not final — LibCST also
    reads syntax newer than the running Python — but its message is the better one to show.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        message = f"{error.msg} (line {error.lineno})" if error.lineno else str(error.msg)
        if "too many nested" in str(error.msg) or "too many levels" in str(error.msg):
            return f"cannot parse: {message}", None, None
        return None, message, None
    except (RecursionError, MemoryError):
        return TOO_DEEP, None, None
    except Exception:  # noqa: BLE001 - e.g. ValueError for NUL bytes: let LibCST report it
        return None, None, None
    if _depth(tree) > MAX_NESTING:
        return TOO_DEEP, None, None
    return None, None, tuple(_first_line(statement) for statement in tree.body)


def _first_line(statement: ast.stmt) -> int:
    """Where a top-level statement begins: its first decorator's line, else its own."""
    decorators = getattr(statement, "decorator_list", None)
    return min(statement.lineno, *(d.lineno for d in decorators)) if decorators else statement.lineno


# Nodes that never hold a deeper subtree: not worth a stack entry.
_LEAVES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.Constant, ast.Name, ast.alias)


def _depth(tree: ast.AST) -> int:
    """The deepest nesting of the syntax tree as LibCST builds it, without recursion.

    `a and b and c` is one flat node for `ast` but a chain for LibCST, one level per operator,
    and its native parser crashes the process on a chain of a few thousand: it counts so."""
    deepest = 0
    stack = [(tree, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                return deepest
        depth += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST) and not isinstance(item, _LEAVES):
                        push((item, depth))
            elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
                push((value, depth))
    return deepest


def _parser_message(error: BaseException) -> str:
    if isinstance(error, cst.ParserSyntaxError):
        lines = [line.strip() for line in str(error).strip().splitlines()]
        # "Syntax Error @ 1:1." alone says nothing: the tokenizer's reason follows it
        reason = next((line for line in lines[1:3] if line.startswith("tokenizer error")), None)
        return f"{lines[0]} {reason}" if reason else one_line(error)
    return f"{type(error).__name__}: {one_line(error)}"


_MIXED_INDENT = re.compile(rb"^(?: +\t|\t+ +\S)", re.MULTILINE)


def _only_libcst_fails(source: bytes) -> str:
    """Why a file Python runs is left alone: LibCST's parser is stricter than CPython's."""
    mixed = _MIXED_INDENT.search(source) or (re.search(rb"^\t", source, re.M) and re.search(rb"^ ", source, re.M))
    if mixed:
        return "Python reads it, but LibCST rejects indentation that mixes tabs and spaces; left unchanged"
    return "Python reads it, but LibCST's parser does not; left unchanged"


def code_that_parses(module: cst.Module, cpython: bool, text: str | None = None) -> bytes | None:
    """The module's bytes (`text` where the caller has the module's code already), or None if
    they do not parse (generated once, checked and kept).

    A file the running Python parsed is checked with CPython's parser, a tenth of LibCST's
    cost (and what matters: the fixed program must run); a file with syntax newer than the
    running Python, with LibCST's."""
    code = module.bytes if text is None else text.encode(module.encoding)
    try:
        if cpython:
            ast.parse(code)
        else:
            cst.parse_module(code)
    except Exception:  # noqa: BLE001
        return None
    return code

"""Colour and progress for people at a terminal, and nothing for pipes, files and CI logs.

Colour is click's: `click.echo` drops the styles when the stream is not a terminal, and
`NO_COLOR` (https://no-color.org, any non-empty value) turns them off everywhere. A report
written to `--output-file` is never styled. The progress bar is drawn on stderr, only when
stderr is a terminal, so stdout (a report, a diff, a fixed source) stays exactly the same.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Callable

import click

STYLES = {
    "location": {"bold": True},
    "code": {"fg": "red", "bold": True},
    "fixed": {"fg": "green"},
    "fixable": {"fg": "cyan"},
    "unsafe-fix": {"fg": "yellow"},
    "no-fix": {"fg": "magenta"},
}


def no_color() -> bool:
    return bool(os.environ.get("NO_COLOR"))


def echo_color() -> bool | None:
    """click.echo's `color`: None lets click decide by the stream (a terminal or not)."""
    return False if no_color() else None


def style(text: str, role: str) -> str:
    """`text` styled for its role (see report.text_lines); unstyled under NO_COLOR."""
    if no_color() or role not in STYLES:
        return text
    return click.style(text, **STYLES[role])  # type: ignore[arg-type]


def diff_line(line: str) -> str:
    """A unified diff's line, coloured as git colours it."""
    if no_color():
        return line
    if line.startswith(("+++ ", "--- ")):
        return click.style(line, bold=True)
    if line.startswith("@@"):
        return click.style(line, fg="cyan")
    if line.startswith("+"):
        return click.style(line, fg="green")
    if line.startswith("-"):
        return click.style(line, fg="red")
    return line


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def progress(count: int, label: str, enabled: bool = True) -> Iterator[Callable[[], None]]:
    """A bar over `count` files on stderr, when it is a terminal (and `enabled`); yields the
    function to call once a file is done. Otherwise a function that does nothing."""
    if not enabled or count < 2 or not stderr_is_terminal():
        yield lambda: None
        return
    with click.progressbar(length=count, label=label, file=sys.stderr, color=echo_color()) as bar:
        yield lambda: bar.update(1)

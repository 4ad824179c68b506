"""Safe writes: never a half-written file, never a file someone changed meanwhile, never a
file outside the tree being fixed reached through a symbolic link."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class WriteError(Exception):
    pass


def write_atomic(path: Path, data: bytes, expected_old: bytes, tree: Path | None = None) -> None:
    """Replace `path` with `data` through a temporary file in the same folder and a rename.

    The permission bits of the original are kept. If the file on disk no longer holds
    `expected_old` (an editor or another tool changed it since devfix read it), nothing is
    written and WriteError says so. A symbolic link is written through (the link itself
    stays a link) only when its target lies inside `tree`, the resolved folder the file was
    found under; otherwise nothing is written.
    """
    path = _target(path, tree)
    try:
        current = path.read_bytes()
    except OSError as error:
        raise WriteError(f"cannot re-read before writing: {error.strerror or error}") from None
    if current != expected_old:
        raise WriteError("file changed on disk while devfix was working on it; not overwritten")
    mode = stat.S_IMODE(path.stat().st_mode)
    folder = path.parent
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".devfix", dir=folder)
    except OSError as error:
        raise WriteError(f"cannot create a temporary file next to it: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise WriteError(f"cannot write: {error.strerror or error}") from None


def _target(path: Path, tree: Path | None) -> Path:
    """The file to replace: `path` itself, or the target of a link that stays inside `tree`."""
    if not path.is_symlink():
        return path
    target = path.resolve()
    if tree is None or (tree not in target.parents):
        raise WriteError(f"symbolic link to {target}, outside the tree being fixed; not written through")
    return target

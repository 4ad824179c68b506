"""Safe writes: never a half-written file, never a file someone changed meanwhile."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class WriteError(Exception):
    pass


def write_atomic(path: Path, data: bytes, expected_old: bytes) -> None:
    """Replace `path` with `data` through a temporary file in the same folder and a rename.

    The permission bits of the original are kept. If the file on disk no longer holds
    `expected_old` (an editor or another tool changed it since devfix read it), nothing is
    written and WriteError says so.
    """
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

"""Per-run state of the simulation: the run's settings, where the user's code is,
and the first device error (or unsupported feature) seen.

No torch import here: the modes and patches read and write this state, and the
runner hands it to the report.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from types import FrameType

_DEVFIX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Unsupported(BaseException):
    """A feature the simulation does not model.

    A ``BaseException`` so that a script's ``except Exception`` cannot swallow
    it and let an unverified script pass.
    """

    def __init__(self, feature: str):
        super().__init__(feature)
        self.feature = feature


@dataclass
class Event:
    """The first device error (or unsupported feature) seen during the run."""

    kind: str  # "device" | "unsupported"
    message: str
    operation: str = ""
    devices: dict[str, str] = field(default_factory=dict)  # {argument: device}
    rule: str = ""
    detail: str = ""
    file: str | None = None
    line: int | None = None
    exc: BaseException | None = None
    callers: list[tuple[str, int]] = field(default_factory=list)  # outer user frames, innermost first: [(file, line)]


class State:
    """Per-run bookkeeping shared by the modes and patches.

    ``root``: the user's code is every file under this directory (the script's
    directory, or the project folder given to ``devfix verify``).
    """

    def __init__(self, script: str | None, cpu_only_load: bool = False, devices: int = 1, root: str | None = None):
        self.script = os.path.abspath(script) if script else None
        self.root = os.path.abspath(root) if root else os.path.dirname(self.script or os.getcwd())
        self.cpu_only_load = cpu_only_load
        self.devices = devices
        self.tensors_on_device = 0
        self.device_used = False  # the parent "initialised CUDA"
        self.in_bad_fork = False
        self.first: Event | None = None
        self._user_cache: dict[str, bool] = {}
        self.local = threading.local()
        self._excluded: tuple[str, ...] = (_DEVFIX_DIR + os.sep,)

    def exclude(self, directory: str) -> None:
        """Never treat files under `directory` as the user's (torch, devfix itself)."""
        self._excluded += (os.path.abspath(directory) + os.sep,)

    # -- the current device of this thread (torch.cuda.set_device / torch.cuda.device) --
    @property
    def current_device(self) -> int:
        index: int = getattr(self.local, "device", 0)
        return index

    @current_device.setter
    def current_device(self, index: int) -> None:
        self.local.device = index

    # -- where in the user's code are we? ------------------------------------
    def is_user_file(self, filename: str) -> bool:
        hit = self._user_cache.get(filename)
        if hit is None:
            path = os.path.abspath(filename)
            hit = (
                not filename.startswith("<")  # `<frozen runpy>`, `<string>`: not a file of the user's
                and path.startswith(self.root + os.sep)
                and not path.startswith(self._excluded)
                and "site-packages" not in path
            )
            self._user_cache[filename] = hit
        return hit

    def user_frame(self, frame: FrameType | None = None) -> FrameType | None:
        """Innermost frame of the user's own code on the current stack."""
        f: FrameType | None = frame or sys._getframe(1)
        while f is not None:
            if self.is_user_file(f.f_code.co_filename):
                return f
            f = f.f_back
        return None

    def user_callers(self, frame: FrameType | None, limit: int = 3) -> list[tuple[str, int]]:
        """(file, line) of the user frames that called `frame`, innermost first.

        A mismatch inside `forward` is reported where it happens; the loop line that fed the
        CPU batch in is one of these callers, and often the line to change.
        """
        found: list[tuple[str, int]] = []
        f = frame.f_back if frame is not None else None
        while f is not None and len(found) < limit:
            if self.is_user_file(f.f_code.co_filename):
                found.append((f.f_code.co_filename, f.f_lineno))
            f = f.f_back
        return found

    def record(self, event: Event) -> None:
        if self.first is None:
            self.first = event


_CURRENT: State | None = None


def current() -> State | None:
    """The state of the run in progress (None outside ``activate``)."""
    return _CURRENT


def set_current(state: State | None) -> None:
    global _CURRENT
    _CURRENT = state


def active() -> State:
    """The state of the run in progress, for the patches installed by ``activate`` (which
    only run while it is in progress)."""
    if _CURRENT is None:
        raise RuntimeError("devfix verify: no simulation in progress")
    return _CURRENT


def _after_fork_in_child() -> None:
    st = _CURRENT
    if st is not None and st.device_used:
        st.in_bad_fork = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

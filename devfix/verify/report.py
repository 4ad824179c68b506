"""Turn the outcome of a simulated run into a verdict, a text report and JSON.

No torch import here: the runner hands over plain data (a simulator ``Event``
or an exception), so this module is testable and cheap to import.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # no import at run time: the simulator's package imports torch
    from devfix.verify.simulator.state import Event

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_UNSUPPORTED = 0, 1, 2, 3

# What to do, per rule, in verify's words, and the rule's kebab-case name: both read from
# the rule's class (`verify_hint`, `name`) through the rules registry, when a report names a rule.

# device errors that reach the runner as text only (raised in a DataLoader
# worker process or the pin-memory thread and re-raised by the DataLoader)
_TEXT_PATTERNS = [
    ("Cannot re-initialize CUDA in forked subprocess", "DEV006", "CUDA use in a forked DataLoader worker"),
    ("only dense CPU tensors can be pinned", "DEV005", "pin_memory()"),
    ("Attempting to deserialize object on a CUDA device", "DEV010", "torch.load()"),
    ("Expected all tensors to be on the same device", "DEV004", "tensor operation"),
]


@dataclass
class Result:
    verdict: str  # ok | device-error | script-error | unsupported | usage-error
    exit_code: int
    file: str | None = None
    line: int | None = None
    operation: str | None = None
    devices: dict[str, str] = field(default_factory=dict)
    rule: str | None = None
    rule_name: str | None = None
    message: str | None = None
    hint: str | None = None
    detail: str | None = None
    tensors_on_device: int = 0
    seconds: float = 0.0
    called_from: list[str] = field(default_factory=list)  # ["file:line", ...] outer user frames
    gpus: int = 1  # how many GPUs were simulated (--devices)
    cell: int | None = None  # in a notebook: the cell (`line` is then the line in that cell)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    def to_text(self) -> str:
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        where = f"{_show(self.file)}:{cell}{self.line}: " if self.file else ""
        if self.verdict == "ok":
            return (
                f"verify: OK — {self.tensors_on_device:,} tensors placed on the "
                f"{simulated(self.gpus)}, {self.seconds:.1f} s"
            )
        if self.verdict == "device-error":
            devs = ", ".join(f"{k} on {v}" for k, v in self.devices.items())
            if devs:
                head = f"{where}device mismatch in {self.operation}: {devs}"
            else:
                head = f"{where}device error: {self.operation}"
            lines = [head, f"  {self.message}"]
            lines += [f"  called from {where_from}" for where_from in self.called_from]
            if self.detail:
                lines.append(f"  ({self.detail})")
            if self.rule:
                lines.append(f"hint: {self.rule} {self.rule_name} — {self.hint}")
            lines.append(f"verify: FAILED — device bug on the {simulated(self.gpus)}, {self.seconds:.1f} s")
            return "\n".join(lines)
        if self.verdict == "unsupported":
            return (
                f"{where}unsupported: {self.operation}\n"
                "verify: cannot verify this script: the simulation does not model "
                "this feature (see docs/verify.md)"
            )
        if self.verdict == "script-error":
            return (
                f"{where}the script failed (not a device error): {self.message}\n"
                f"verify: FAILED — script error, {self.seconds:.1f} s"
            )
        return f"verify: {self.message}"


def simulated(gpus: int) -> str:
    """'simulated cuda:0', 'simulated cuda:0 and cuda:1', 'simulated cuda:0 to cuda:3'."""
    if gpus <= 1:
        return "simulated cuda:0"
    if gpus == 2:
        return "simulated cuda:0 and cuda:1"
    return f"simulated cuda:0 to cuda:{gpus - 1}"


def show_path(path: str | None) -> str:
    """A path as reports show it: relative to the current folder when inside it."""
    return _show(path)


def _show(path: str | None) -> str:
    if not path:
        return "?"
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def rule_name(code: str) -> str:
    """The rule's kebab-case name, from the rules registry (imported on first use: it
    pulls in libcst, which a clean run never needs)."""
    from devfix.rules import BY_CODE

    rule = BY_CODE.get(code)
    return rule.name if rule is not None else ""


def rule_hint(code: str) -> str:
    """What to do about a device error blamed on the rule: its class's `verify_hint`."""
    from devfix.rules import BY_CODE

    rule = BY_CODE.get(code)
    return rule.verify_hint if rule is not None else ""


def _with_rule(res: Result, rule: str | None) -> Result:
    if rule:
        res.rule = rule
        res.rule_name = rule_name(rule)
        res.hint = rule_hint(rule)
    return res


def last_user_frame(exc: BaseException, is_user_file: Callable[[str], bool]) -> tuple[str | None, int | None]:
    """The innermost frame of the traceback that is in the user's own code."""
    found: tuple[str | None, int | None] = (None, None)
    for fs in traceback.extract_tb(exc.__traceback__):
        if is_user_file(fs.filename):
            found = (fs.filename, fs.lineno)
    return found


def location_in_text(text: str, is_user_file: Callable[[str], bool]) -> tuple[str | None, int | None]:
    """Last user frame named inside a re-raised worker traceback text."""
    found: tuple[str | None, int | None] = (None, None)
    for m in re.finditer(r'File "([^"]+)", line (\d+)', text):
        if is_user_file(m.group(1)):
            found = (m.group(1), int(m.group(2)))
    return found


def from_event(
    event: Event, exc: BaseException | None, is_user_file: Callable[[str], bool], tensors: int, seconds: float
) -> Result:
    """A device error or unsupported feature recorded by the simulator."""
    file, line = event.file, event.line
    if file is None and exc is not None:
        file, line = location_in_text(str(exc), is_user_file)
        if file is None:
            file, line = last_user_frame(exc, is_user_file)
    if event.kind == "unsupported":
        return Result(
            "unsupported",
            EXIT_UNSUPPORTED,
            file,
            line,
            event.message,
            message=f"unsupported: {event.message}",
            tensors_on_device=tensors,
            seconds=seconds,
        )
    res = Result(
        "device-error",
        EXIT_FAIL,
        file,
        line,
        event.operation,
        dict(event.devices),
        message=event.message,
        detail=event.detail or None,
        tensors_on_device=tensors,
        seconds=seconds,
        called_from=[f"{_show(f)}:{n}" for f, n in event.callers],
    )
    return _with_rule(res, event.rule)


def from_exception(exc: BaseException, is_user_file: Callable[[str], bool], tensors: int, seconds: float) -> Result:
    """An exception the simulator did not record: maybe a device error raised in
    a worker process / pin thread (text only), else the script's own failure."""
    text = f"{type(exc).__name__}: {exc}"
    for pattern, rule, op in _TEXT_PATTERNS:
        if pattern in str(exc):
            file, line = location_in_text(str(exc), is_user_file)
            if file is None:
                file, line = last_user_frame(exc, is_user_file)
            msg = next((ln for ln in str(exc).splitlines() if pattern in ln), str(exc))
            msg = re.sub(r"^\w+(Error|Exception): ", "", msg.strip())
            res = Result(
                "device-error", EXIT_FAIL, file, line, op, {}, message=msg, tensors_on_device=tensors, seconds=seconds
            )
            return _with_rule(res, rule)
    file, line = last_user_frame(exc, is_user_file)
    return Result(
        "script-error",
        EXIT_FAIL,
        file,
        line,
        message=text.splitlines()[0] if text else text,
        tensors_on_device=tensors,
        seconds=seconds,
    )

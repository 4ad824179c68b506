"""The fixture corpus: every `tests/fixtures/<RULE>/<case>.py` is one test case.

`<case>.py` is code the rule must fix; `ok_<case>.py` is correct code that must come out
byte-for-byte unchanged, with nothing reported. A fixture may start with directive
comments, read by the harness (they stay in the file, like any comment):

    # devfix: --unsafe-fixes            apply unsafe fixes too
    # devfix: --dataset-placement=device  any Config field, kebab-case
    # devfix: no-run                    not a runnable script (a fragment, or needs data)
    # devfix: input-runs                the input's bug shows neither on a simulated GPU nor
                                        on the CPU (a speed fix, a latent bug): see
                                        tests/test_fixture_verify.py
    # devfix: no-verify  (reason)       the simulator cannot model it
    # devfix: verify-devices=2          verify it on two simulated GPUs (`cuda:1`)
    # devfix: verify-same-machine       verify without --cpu-only-load (saved and loaded in one run)
    # devfix: fails-on-gpu  (reason)    the fixed script still fails on a real GPU (a line
                                        reported but not fixed): the `gpu` test checks it does
    # devfix: weights-on-cpu  (reason)  on a real GPU the fixed script keeps its model on the
                                        CPU by its own choice (an option left off)
    # devfix: pending  (reason)         the rule does not report this yet (a fixture written by
                                        scripts/new_rule.py): no snapshot, not run; the tests
                                        fail, asking for the line to go, once the rule reports it
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from devfix.config import Config

FIXTURES = Path(__file__).parent / "fixtures"
DIRECTIVE = re.compile(r"^# devfix:\s*(.+?)\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    rule: str
    name: str
    config: Config
    runnable: bool
    directives: tuple = ()

    @property
    def negative(self) -> bool:
        return self.name.startswith("ok_")

    @property
    def pending(self) -> bool:
        return "pending" in self.directives

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.name}"

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")


def _directives(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        match = DIRECTIVE.match(line)
        if match:
            found.extend(match.group(1).split())
        elif line.strip() and not line.startswith("#"):
            break
    return found


def _config(directives: list[str]) -> Config:
    overrides: dict[str, object] = {}
    for directive in directives:
        if directive == "--unsafe-fixes":
            overrides["unsafe_fixes"] = True
        elif directive.startswith("--") and "=" in directive:  # a Config field
            key, value = directive[2:].split("=", 1)
            field_name = key.replace("-", "_")
            current = getattr(Config(), field_name)
            overrides[field_name] = tuple(value.split(",")) if isinstance(current, tuple) else value
    return Config().with_overrides(**overrides)


def all_cases() -> list[Case]:
    cases = []
    for path in sorted(FIXTURES.glob("DEV*/*.py")):
        directives = _directives(path.read_text(encoding="utf-8"))
        cases.append(
            Case(
                path,
                path.parent.name,
                path.stem,
                _config(directives),
                "no-run" not in directives and "pending" not in directives,
                tuple(directives),
            )
        )
    return cases

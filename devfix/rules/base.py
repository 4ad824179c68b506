"""What a rule is: its identity, its docs and examples, and its check.

A rule is a class with a code, a kebab-case name, a one-line summary, a fix safety, and
ruff-style documentation ("why", an example, what to use instead). It carries its own
examples in the Fixit manner — `invalid` (code it must fix, with the expected result) and
`valid` (code it must leave alone) — which `devfix explain` prints and the test suite runs.
Everything else that is said about a rule is read from its class too: the README's table
(`fix_summary`), `devfix verify`'s hint (`verify_hint`), and which fix wins when two rules
rewrite the same code (`priority`). A module `devfix/rules/devNNN_*.py` holding the class is
all the registry needs (`devfix.rules.discover`).
`check` reads the shared `FileFacts` and yields findings; fixes are edits (data), never
transformations done by the rule itself. A fix that needs a device variable that does not
exist yet carries the declaration it needs (`requests`); the engine inserts each one once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from devfix.analysis.devices import DeclarationRequest, DeviceChoice
from devfix.analysis.facts import FileFacts
from devfix.config import Config
from devfix.edits import Edit


@dataclass(frozen=True)
class Example:
    """`before` must be reported; when `after` is given, the fix must produce it.

    `pending=True` marks an example the rule does not handle yet (a rule just written by
    `scripts/new_rule.py`): the tests then check that it is left alone and nothing reported,
    and fail, asking for the flag to go, as soon as the rule reports it."""

    before: str
    after: str | None = None
    pending: bool = False


@dataclass(eq=False)
class Finding:
    rule: Rule
    node: cst.CSTNode  # a node of the original tree: the finding's position
    message: str
    edits: tuple[Edit, ...] = ()
    hint: str = ""  # what to do by hand, for findings without a fix
    requests: tuple[DeclarationRequest, ...] = ()  # device declarations the fix needs

    @property
    def fixable(self) -> bool:
        return bool(self.edits)


@dataclass
class RuleContext:
    facts: FileFacts
    config: Config
    module: cst.Module

    def statement(self, code: str) -> cst.BaseStatement:
        """Parse one statement in this file's own newline and indentation style."""
        return cst.parse_statement(code, config=self.module.config_for_parsing)

    def expression(self, code: str) -> cst.BaseExpression:
        return cst.parse_expression(code, config=self.module.config_for_parsing)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    safety: ClassVar[str] = "safe"  # "safe": applied by `apply`; "unsafe": only with --unsafe-fixes
    enabled_by_default: ClassVar[bool] = True
    why: ClassVar[str] = ""
    example: ClassVar[str] = ""
    use_instead: ClassVar[str] = ""
    invalid: ClassVar[Sequence[Example]] = ()
    valid: ClassVar[Sequence[str]] = ()
    # what the fix does, one line: the README table's "What it does" (empty: the summary)
    fix_summary: ClassVar[str] = ""
    # what to do, one line, when `devfix verify` blames a run's device error on this rule
    verify_hint: ClassVar[str] = ""
    # when two rules' fixes rewrite the same code, the rule with the lower priority runs
    # first and its fix wins; equal priorities run in code order (devfix.rules.run_order)
    priority: ClassVar[int] = 0

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def finding(
        self,
        node: cst.CSTNode,
        message: str,
        edits: Sequence[Edit] = (),
        hint: str = "",
        device: DeviceChoice | None = None,
    ) -> Finding:
        requests: tuple[DeclarationRequest, ...] = ()
        if device is not None and device.request is not None and edits:
            requests = (device.request,)
        # one finding, one line: a quoted expression that spans lines reads as one
        return Finding(self, node, _one_line(message), tuple(edits), _one_line(hint), requests)

    @classmethod
    def docs(cls) -> str:
        """The rule's page, in the shape of ruff's rule docs."""
        lines = [
            f"# {cls.code} {cls.name}",
            "",
            f"{cls.summary}",
            "",
            f"Fix: {'safe (applied by `devfix apply`)' if cls.safety == 'safe' else 'unsafe (applied only with `--unsafe-fixes`)'}."
            + ("" if cls.enabled_by_default else " Off unless selected."),
            "",
            "## Why is this bad?",
            cls.why.strip(),
            "",
            "## Example",
            "```python",
            cls.example.strip("\n"),
            "```",
            "",
            "## Use instead",
            "```python",
            cls.use_instead.strip("\n"),
            "```",
        ]
        return "\n".join(lines) + "\n"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def names_list(names: Sequence[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


__all__: list[str] = ["Example", "Finding", "Rule", "RuleContext", "names_list", "plural"]


def _one_line(text: str) -> str:
    """`nn.Sequential(\n    nn.Linear(...` -> `nn.Sequential( nn.Linear(...`."""
    return re.sub(r"\s*\n\s*", " ", text) if "\n" in text else text

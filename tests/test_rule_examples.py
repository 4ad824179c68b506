"""Each rule's own examples (the Fixit way): `invalid` must be fixed as shown, `valid` left alone."""

from __future__ import annotations

import pytest

from devfix.config import Config
from devfix.engine import fix_code
from devfix.rules import ALL_RULES

INVALID = [(rule, i, example) for rule in ALL_RULES for i, example in enumerate(rule.invalid)]
VALID = [(rule, i, code) for rule in ALL_RULES for i, code in enumerate(rule.valid)]


def _config(rule):
    return Config(extend_select=(rule.code,), unsafe_fixes=rule.safety == "unsafe")


@pytest.mark.parametrize("rule,index,example", INVALID, ids=[f"{r.code}-{i}" for r, i, _ in INVALID])
def test_invalid_example_is_fixed(rule, index, example):
    new, diagnostics = fix_code(example.before, _config(rule))
    assert any(d.code == rule.code for d in diagnostics)
    if example.after is not None:
        assert new == example.after


@pytest.mark.parametrize("rule,index,code", VALID, ids=[f"{r.code}-{i}" for r, i, _ in VALID])
def test_valid_example_is_left_alone(rule, index, code):
    new, diagnostics = fix_code(code, _config(rule))
    assert new == code
    assert [d for d in diagnostics if d.code == rule.code] == []


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_is_documented(rule):
    assert rule.code.startswith("DEV") and len(rule.code) == 6
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.safety in ("safe", "unsafe")
    assert rule.summary and rule.why.strip() and rule.example.strip() and rule.use_instead.strip()
    assert rule.invalid and rule.valid, "every rule carries examples it must fix and leave alone"


def test_generated_rule_docs_are_current():
    """docs/rules.md is generated from the rule classes; regenerate with `devfix explain --all > docs/rules.md`."""
    from pathlib import Path

    from devfix.cli import rules_reference

    page = Path(__file__).parent.parent / "docs" / "rules.md"
    assert page.read_text(encoding="utf-8") == rules_reference()

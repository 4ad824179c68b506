"""Each rule's own examples (the Fixit way): `invalid` must be fixed as shown, `valid` left alone."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from devfix.config import Config
from devfix.engine import fix_code
from devfix.rules import ALL_RULES, BY_CODE, BY_NAME, RegistryError, discover, enabled_rules, run_order

ROOT = Path(__file__).resolve().parent.parent

INVALID = [(rule, i, example) for rule in ALL_RULES for i, example in enumerate(rule.invalid)]
VALID = [(rule, i, code) for rule in ALL_RULES for i, code in enumerate(rule.valid)]


def _script(name: str) -> ModuleType:
    """A module of scripts/, imported from its file (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(f"scripts_{name}", ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config(rule):
    return Config(extend_select=(rule.code,), unsafe_fixes=rule.safety == "unsafe")


@pytest.mark.parametrize("rule,index,example", INVALID, ids=[f"{r.code}-{i}" for r, i, _ in INVALID])
def test_invalid_example_is_fixed(rule, index, example):
    new, diagnostics = fix_code(example.before, _config(rule))
    if example.pending:  # a rule being written (scripts/new_rule.py): not reported yet
        assert not any(d.code == rule.code for d in diagnostics), (
            f"{rule.code} now reports its pending example {index}: drop its `pending=True`"
        )
        return
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
    """docs/rules.md is generated from the rule classes; regenerate with `python scripts/update_docs.py`
    (or `devfix explain --all > docs/rules.md`)."""
    from devfix.cli import rules_reference

    page = ROOT / "docs" / "rules.md"
    assert page.read_text(encoding="utf-8") == rules_reference()


def test_readme_rule_table_is_current():
    """The README's table of rules, between its `rules-table` markers, is generated from the rule
    classes; regenerate with `python scripts/update_docs.py`."""
    update_docs = _script("update_docs")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(update_docs.START) == 1 and readme.count(update_docs.END) == 1
    assert update_docs.with_rule_table(readme) == readme, "run `python scripts/update_docs.py`"


def test_rules_are_discovered_in_code_order_and_run_by_priority():
    modules = sorted(p.stem for p in (ROOT / "devfix" / "rules").glob("dev[0-9][0-9][0-9]_*.py"))
    assert [rule.__module__.rsplit(".", 1)[1] for rule in ALL_RULES] == modules
    assert [rule.code for rule in ALL_RULES] == sorted(BY_CODE)
    assert {rule.name: rule for rule in ALL_RULES} == BY_NAME
    everything = [rule.code for rule in ALL_RULES]
    assert [rule.code for rule in enabled_rules(["ALL"])] == everything  # equal priorities: code order
    assert [rule.code for rule in run_order(reversed(ALL_RULES))] == everything


def test_priority_orders_the_run(monkeypatch):
    monkeypatch.setattr(BY_CODE["DEV011"], "priority", -1)
    assert [rule.code for rule in enabled_rules(["DEV002", "DEV011", "DEV003"])] == ["DEV011", "DEV002", "DEV003"]
    assert [rule.code for rule in ALL_RULES][:3] == ["DEV001", "DEV002", "DEV003"]  # the table keeps code order


def test_a_rule_module_must_define_one_rule_with_its_own_code(tmp_path, monkeypatch):
    package = tmp_path / "fake_rules"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("X = 1\n")  # not a rule module: ignored
    rule = "from devfix.rules.base import Rule\n\n\nclass R(Rule):\n    code = {code!r}\n    name = 'r'\n"
    (package / "dev901_r.py").write_text(rule.format(code="DEV901"))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [r.code for r in discover("fake_rules")] == ["DEV901"]
    (package / "dev902_wrong.py").write_text(rule.format(code="DEV903"))
    with pytest.raises(RegistryError, match="DEV903; its file name says DEV902"):
        discover("fake_rules")

"""The rule registry, found rather than listed: every module of this package named
`devNNN_<name>.py` defines one `Rule` subclass whose code is `DEVNNN`. Adding a rule is adding
its module (`python scripts/new_rule.py DEV016 my-rule "summary"` writes one).

Two orders, both explicit:

- the *table order* (`ALL_RULES`): by code. `devfix rules`, `devfix explain --all`,
  docs/rules.md, the README's table and SARIF's rule list follow it;
- the *run order* (`enabled_rules`, `run_order`): by `Rule.priority`, then by code. Rules are
  independent of the order they run in (they read one analysis and return edits as data),
  except that when two fixes rewrite the same code the fix of the rule that ran first wins
  (`devfix.edits.apply_edits`), and a DEV001 declaration is reported at the first finding, in
  run order, that needs it. Every rule has the default priority today, so the run order is
  the code order (no fixture's fixed output depends on it; seven fixtures' DEV001 positions do).

The rule classes are imported on first use (`ALL_RULES`, `BY_CODE`, `lookup`...): each module
imports the analysis and LibCST, which a re-run the cache answers never needs. What checking
a selector needs, the codes and names, is read from the modules' file names (`CATALOGUE`):
`dev004_batch_to_device.py` is DEV004 `batch-to-device`, and `discover` holds every rule to
the name its file gives it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from devfix.rules.base import Example, Finding, Rule, RuleContext

    ALL_RULES: list[type[Rule]]
    BY_CODE: dict[str, type[Rule]]
    BY_NAME: dict[str, type[Rule]]

RULE_MODULE = re.compile(r"^dev(\d{3})_([a-z0-9_]+)$")


class RegistryError(Exception):
    """A rule module that breaks the registry's conventions (a bug in devfix, not in user code)."""


def catalogue(package: str = __name__) -> list[tuple[str, str, str]]:
    """(code, name, module) of the `devNNN_*.py` modules of `package`, in code order, read
    from their file names alone: no rule is imported."""
    found = []
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        match = RULE_MODULE.match(info.name)
        if match is not None:
            found.append((f"DEV{match.group(1)}", match.group(2).replace("_", "-"), f"{package}.{info.name}"))
    return sorted(found)


def discover(package: str = __name__) -> list[type[Rule]]:
    """The rules of the `devNNN_*.py` modules of `package`, in code order. Each module must
    define exactly one `Rule` subclass, whose code matches the module's number and whose
    name its file's."""
    from devfix.rules.base import Rule

    found: dict[str, type[Rule]] = {}
    for code, name, module_name in catalogue(package):
        module = importlib.import_module(module_name)
        defined = [
            value
            for _, value in inspect.getmembers(module, inspect.isclass)
            if issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__
        ]
        if len(defined) != 1:
            raise RegistryError(f"{module.__name__} defines {len(defined)} Rule subclasses; a rule module defines one")
        rule = defined[0]
        if rule.code != code:
            raise RegistryError(f"{module.__name__} defines {rule.code}; its file name says {code}")
        if rule.name != name:
            raise RegistryError(f"{module.__name__} names its rule {rule.name!r}; its file name says {name!r}")
        if rule.code in found:
            raise RegistryError(f"{rule.code} is defined by {found[rule.code].__module__} and {module.__name__}")
        found[rule.code] = rule
    return [found[code] for code in sorted(found)]


def run_order(rules: Iterable[type[Rule]]) -> list[type[Rule]]:
    """`rules` in the order they run: by priority (lower first), then by code. When two fixes
    rewrite the same code, the one of the rule that ran first wins."""
    return sorted(rules, key=lambda rule: (rule.priority, rule.code))


CATALOGUE: list[tuple[str, str, str]] = catalogue()
if len({name for _, name, _ in CATALOGUE}) != len(CATALOGUE):
    raise RegistryError("two rules share a name")

_BASE_NAMES = ("Example", "Finding", "Rule", "RuleContext")


def __getattr__(attribute: str) -> Any:
    """The rule classes and the base types, imported when first asked for (see above)."""
    if attribute in _BASE_NAMES:
        from devfix.rules import base

        value = getattr(base, attribute)
    elif attribute in ("ALL_RULES", "BY_CODE", "BY_NAME"):
        rules = discover()
        globals().update(
            ALL_RULES=rules,
            BY_CODE={rule.code: rule for rule in rules},
            BY_NAME={rule.name: rule for rule in rules},
        )
        value = globals()[attribute]
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    globals()[attribute] = value
    return value


def _loaded(attribute: str) -> Any:
    """A lazily imported attribute, from inside this module (where `__getattr__` is not asked)."""
    found = globals().get(attribute)
    return found if found is not None else __getattr__(attribute)


def selected_codes(selector: str) -> list[str]:
    """The codes a selector names: a code (`DEV003`), a prefix (`DEV00`), `ALL`, or a
    kebab-case name; KeyError when it names none. Reads no rule (`CATALOGUE`)."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return [code for code, _, _ in CATALOGUE]
    by_name = [code for code, name, _ in CATALOGUE if name == selector]
    matches = by_name or [code for code, _, _ in CATALOGUE if code.startswith(selector.upper())]
    if not matches:
        raise KeyError(selector)
    return matches


def lookup(selector: str) -> list[type[Rule]]:
    """Rules matching a code (`DEV003`), a prefix (`DEV00`), `ALL`, or a kebab-case name."""
    by_code = _loaded("BY_CODE")
    return [by_code[code] for code in selected_codes(selector)]


def enabled_rules(
    select: Sequence[str] = (), extend_select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> list[type[Rule]]:
    """The rules to run, in run order (`run_order`)."""
    if select:
        chosen = {rule for selector in select for rule in lookup(selector)}
    else:
        chosen = {rule for rule in _loaded("ALL_RULES") if rule.enabled_by_default}
    chosen |= {rule for selector in extend_select for rule in lookup(selector)}
    chosen -= {rule for selector in ignore for rule in lookup(selector)}
    return run_order(chosen)


def rule_table() -> str:
    """The README's table of rules (between its `rules-table` markers), from the rule classes."""
    lines = ["| Code | Name | Fix | What it does |", "| --- | --- | --- | --- |"]
    for rule in _loaded("ALL_RULES"):
        fix = rule.safety + ("" if rule.enabled_by_default else ", opt-in")
        does = rule.fix_summary or rule.summary
        if not rule.enabled_by_default:
            does = does.removesuffix(".") + f" (`--extend-select {rule.code}`)."
        lines.append(f"| {rule.code} | {rule.name} | {fix} | {does} |")
    return "\n".join(lines) + "\n"


__all__ = [
    "ALL_RULES",
    "BY_CODE",
    "BY_NAME",
    "Example",
    "Finding",
    "RegistryError",
    "Rule",
    "RuleContext",
    "discover",
    "enabled_rules",
    "lookup",
    "rule_table",
    "run_order",
]

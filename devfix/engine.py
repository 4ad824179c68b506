"""The per-file pipeline: bytes -> parse once -> analysis -> rules -> edits -> checked bytes.

Nothing here is rule-specific. A round runs every enabled rule over one `FileFacts`,
applies the fixes of that round in one transformation, and re-parses the result: code that
does not parse is never returned. Conflicting edits are left to the next round, which also
catches what one fix enables in another rule (DEV002 turns `if cuda: model.cuda()` into
`model.to(device)`, which DEV003 may then move up). Rounds stop when nothing changes; the
bound keeps a misbehaving rule from looping.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Set, Tuple, Type

import libcst as cst

from devfix.analysis import FileFacts
from devfix.config import Config
from devfix.edits import apply_edits
from devfix.rules import Finding, Rule, RuleContext, enabled_rules

MAX_ROUNDS = 5


@dataclass(frozen=True)
class Diagnostic:
    line: int
    column: int
    code: str
    name: str
    message: str
    status: str  # "fixed" | "fixable" | "unsafe-fix" | "no-fix"
    hint: str = ""


@dataclass
class FileResult:
    path: str
    old: bytes
    new: bytes
    diagnostics: List[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None
    traceback: Optional[str] = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.new != self.old


class RuleCrash(Exception):
    def __init__(self, rule: Type[Rule], error: BaseException) -> None:
        super().__init__(f"internal error in rule {rule.code} {rule.name}: {type(error).__name__}: {error}")
        self.rule = rule
        self.tb = traceback.format_exc()


def process_source(source: bytes, config: Config, *, fix: bool, path: str = "<string>") -> FileResult:
    """Check (and with `fix`, rewrite) one file's bytes. Never raises for bad input."""
    result = FileResult(path, source, source)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        result.error = f"cannot parse: {_one_line(error)}"
        return result
    except Exception as error:  # noqa: BLE001 - undecodable bytes and other parser failures
        result.error = f"cannot parse: {type(error).__name__}: {_one_line(error)}"
        return result
    rules = [rule() for rule in enabled_rules(config.select, config.extend_select, config.ignore)]
    try:
        module = _run_rounds(module, rules, config, fix, result)
    except RuleCrash as crash:
        result.error = str(crash)
        result.traceback = crash.tb
        result.new = source
        result.diagnostics = []
        return result
    except _Unparseable:
        result.new = source
        return result
    result.new = module.bytes if fix else source
    return result


def _run_rounds(module: cst.Module, rules: Sequence[Rule], config: Config, fix: bool, result: FileResult) -> cst.Module:
    seen: Set[Tuple[str, str]] = set()
    for round_number in range(MAX_ROUNDS if fix else 1):
        facts = FileFacts(module, allow_device_declarations=any(r.code == "DEV001" for r in rules), device_style=config.device_style, dataset_placement=config.dataset_placement)
        findings = _run_rules(module, facts, rules, config)
        to_fix = [f for f in findings if fix and f.fixable and (f.rule.safety == "safe" or config.unsafe_fixes)]
        new_module, fixed = _apply(module, facts, to_fix)
        for finding in findings:
            key = (finding.rule.code, finding.message)
            if finding in fixed:
                result.diagnostics.append(_diagnostic(facts, finding, "fixed"))
            elif finding.fixable and finding in to_fix:
                continue  # conflicted with another edit: the next round sees it again
            elif key not in seen:
                result.diagnostics.append(_diagnostic(facts, finding, _status(finding, fix, config)))
            seen.add(key)
        if not fixed:
            return module
        try:
            module = cst.parse_module(new_module.bytes)
        except Exception as error:  # noqa: BLE001 - a fix produced code that does not parse
            codes = ", ".join(sorted({f.rule.code for f in fixed}))
            result.diagnostics = [d for d in result.diagnostics if d.status != "fixed"]
            result.error = f"internal error: the fixes of {codes} produced code that does not parse ({_one_line(error)}); file left unchanged"
            raise _Unparseable() from None
    return module


class _Unparseable(Exception):
    pass


def _run_rules(module: cst.Module, facts: FileFacts, rules: Sequence[Rule], config: Config) -> List[Finding]:
    ctx = RuleContext(facts, config, module)
    for rule in rules:
        try:
            for finding in rule.check(ctx):
                ctx.findings.append(finding)
        except Exception as error:  # noqa: BLE001 - isolate a rule's bug to this file
            raise RuleCrash(type(rule), error) from error
    return ctx.findings


def _apply(module: cst.Module, facts: FileFacts, findings: Sequence[Finding]) -> Tuple[cst.Module, List[Finding]]:
    """Apply whole findings (all of a finding's edits, or none of them)."""
    if not findings:
        return module, []
    edits = [edit for finding in findings for edit in finding.edits]
    new_module, applied = apply_edits(module, edits, facts.is_inside)
    fixed = [f for f in findings if all(id(edit) in applied for edit in f.edits)]
    partial = [f for f in findings if f not in fixed and any(id(edit) in applied for edit in f.edits)]
    if partial:
        # Some of a finding's edits lost to a conflict: redo the round with whole findings only.
        keep = [edit for finding in fixed for edit in finding.edits]
        new_module, applied = apply_edits(module, keep, facts.is_inside)
        fixed = [f for f in fixed if all(id(edit) in applied for edit in f.edits)]
    return new_module, fixed


def _status(finding: Finding, fix: bool, config: Config) -> str:
    if not finding.fixable:
        return "no-fix"
    if finding.rule.safety == "unsafe" and not config.unsafe_fixes:
        return "unsafe-fix"
    return "fixable"


def _diagnostic(facts: FileFacts, finding: Finding, status: str) -> Diagnostic:
    line, column = facts.position(finding.node)
    return Diagnostic(line, column, finding.rule.code, finding.rule.name, finding.message, status, finding.hint)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def fix_code(source: str, config: Optional[Config] = None, *, fix: bool = True) -> Tuple[str, List[Diagnostic]]:
    """Convenience API for tests and tools: fix a string, return (new source, diagnostics)."""
    result = process_source(source.encode("utf-8"), config or Config(), fix=fix)
    if result.error:
        raise ValueError(result.error)
    return result.new.decode("utf-8"), result.diagnostics

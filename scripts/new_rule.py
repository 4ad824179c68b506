"""Start a new rule: its module, its fixtures and a test file, ready to fill in.

    python scripts/new_rule.py DEV016 my-rule-name "One line: what is wrong with the code."

writes, and touches nothing else:

    devfix/rules/dev016_my_rule_name.py     the rule: code, name, summary, docs, examples,
                                            and a check() that finds nothing yet
    tests/fixtures/DEV016/my_rule_name.py   a case the rule must fix, marked `# devfix: pending`
    tests/fixtures/DEV016/ok_my_rule_name.py  correct code the rule must leave alone
    tests/__snapshots__/test_fixtures/test_fixture_findings[DEV016-ok_my_rule_name].txt
                                            the ok_ fixture's findings: none (what
                                            `pytest --snapshot-update` would record)
    tests/test_dev016_my_rule_name.py       a test file for what the examples cannot say

The registry finds the module by its name (`devfix.rules.discover`), so the rule is in
`devfix rules` and `devfix explain DEV016` at once, and the suite passes: the rule's invalid
example (`pending=True`) and its fixture (`# devfix: pending`) are expected not to be reported
until check() reports them, and then fail, asking for the marks to go. The generated docs
(docs/rules.md, the README's table) are the only other files to update:
`python scripts/update_docs.py`. CONTRIBUTING.md walks through the rest.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
CODE = re.compile(r"^DEV\d{3}$")
NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")

# placeholders: a CPU-only program (devfix leaves it alone) and a correct program using a device
INVALID = "import torch\n\n# TODO({code}): code {code} must report (give `after=` its fix)\nx = torch.ones(3)\nprint(x.sum().item())\n"
VALID = (
    "import torch\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
    "x = torch.ones(3, device=device)\n"
    "print(x.sum().item())\n"
)

RULE = '''"""{code} {name}: {summary}"""

from __future__ import annotations

from collections.abc import Iterator

from devfix.rules.base import Example, Finding, Rule, RuleContext


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    summary = {summary_literal}
    # what the fix does, one line, for the README's table (empty: the summary)
    fix_summary = ""
    # what to do, one line, when `devfix verify` blames a device error on this rule (optional)
    verify_hint = ""
    why = """
TODO: why the code this rule reports is a bug (what fails, and on which machine), and what
its fix changes. `devfix explain {code}` and docs/rules.md print this.
"""
    example = """
# TODO: code {code} reports
"""
    use_instead = """
# TODO: the same code, fixed
"""
    invalid = (
        # code the rule must report, and `after=` the fixed code; pending until check() reports it
        Example({invalid_literal}, pending=True),
    )
    valid = (
        # code the rule must leave alone
        {valid_literal},
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        """Read the analysis (`ctx.facts`: docs/architecture.md) and yield
        `self.finding(node, message, edits)` for each problem; edits are data (devfix.edits)."""
        yield from ()
'''

TEST = '''"""{code} {name}: tests beyond what the suite already runs for every rule (its examples, in
tests/test_rule_examples.py, and its fixtures in tests/fixtures/{code}/, in tests/test_fixtures.py)."""

from __future__ import annotations

from devfix.config import Config
from devfix.engine import fix_code
from devfix.rules import BY_CODE

CONFIG = Config(extend_select=("{code}",))


def _reported(source: str) -> list[str]:
    _, diagnostics = fix_code(source, CONFIG, fix=False)
    return [d.message for d in diagnostics if d.code == "{code}"]


def test_{lower}_is_registered() -> None:
    assert BY_CODE["{code}"].name == "{name}"


def test_{lower}_leaves_a_cpu_only_program_alone() -> None:
    assert _reported("import torch\\n\\nx = torch.ones(3)\\nprint(x.sum().item())\\n") == []
'''

PENDING = "# devfix: pending  ({code} does not report this yet: delete this line once it does)\n"
OK_HEADER = "# TODO({code}): correct code, close to the rule's cases, that {code} must leave alone\n"


def literal(text: str) -> str:
    """A Python string literal for `text`, quoted as ruff format quotes it."""
    quote = "'" if '"' in text and "'" not in text else '"'
    escaped = text.replace("\\", "\\\\").replace("\n", "\\n")
    return quote + (escaped.replace('"', '\\"') if quote == '"' else escaped) + quote


def files(code: str, name: str, summary: str) -> dict[Path, str]:
    """What the scaffold writes, by path relative to the repository."""
    snake = name.replace("-", "_")
    lower = code.lower()
    invalid = INVALID.format(code=code)
    rule = RULE.format(
        code=code,
        name=name,
        summary=summary,
        cls="".join(part.capitalize() for part in name.split("-")),
        summary_literal=literal(summary),
        invalid_literal=literal(invalid),
        valid_literal=literal(VALID),
    )
    snapshot = f"tests/__snapshots__/test_fixtures/test_fixture_findings[{code}-ok_{snake}].txt"
    return {
        Path(f"devfix/rules/{lower}_{snake}.py"): rule,
        Path(f"tests/fixtures/{code}/{snake}.py"): PENDING.format(code=code) + invalid,
        Path(f"tests/fixtures/{code}/ok_{snake}.py"): OK_HEADER.format(code=code) + VALID,
        Path(snapshot): "\n",
        Path(f"tests/test_{lower}_{snake}.py"): TEST.format(code=code, name=name, lower=lower),
    }


def _taken(root: Path, code: str, name: str) -> str | None:
    """Why `code` or `name` cannot be used in the repository at `root`, if so."""
    if list((root / "devfix" / "rules").glob(f"{code.lower()}_*.py")):
        return f"{code} already has a module in devfix/rules/"
    sys.path.insert(0, str(root))  # that repository's devfix, not an installed one
    from devfix.rules import BY_CODE, BY_NAME

    if code in BY_CODE:
        return f"{code} is already {BY_CODE[code].name}"
    if name in BY_NAME:
        return f"{name} is already {BY_NAME[name].code}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Start a new rule: module, fixtures and test file.")
    parser.add_argument("code", help="the rule's code, DEV followed by three digits (DEV016)")
    parser.add_argument("name", help="the rule's kebab-case name (my-rule-name)")
    parser.add_argument("summary", help="one line: what is wrong with the code the rule reports")
    parser.add_argument("--root", type=Path, default=REPOSITORY, help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    code, name, summary, root = args.code.upper(), args.name, args.summary.strip(), args.root.resolve()
    if not CODE.match(code):
        parser.error(f"a code is DEV and three digits, not {args.code!r}")
    if not NAME.match(name):
        parser.error(f"a name is kebab-case (lower-case words joined by '-'), not {name!r}")
    if not summary or "\n" in summary or '"""' in summary:
        parser.error("the summary is one line of text")
    problem = _taken(root, code, name)
    if problem is not None:
        parser.error(problem)
    written = files(code, name, summary)
    existing = [str(path) for path in written if (root / path).exists()]
    if existing:
        parser.error(f"would overwrite {', '.join(existing)}")
    for path, text in written.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path}")
    python = [str(root / path) for path in written if path.suffix == ".py" and path.parts[:2] != ("tests", "fixtures")]
    try:  # the house style, if ruff is installed (a long summary is wrapped)
        subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", "--no-cache", *python], check=True, cwd=root)
    except (OSError, subprocess.CalledProcessError):
        print("(ruff is not installed here: run `ruff format` on the new files)")
    rule_file = next(iter(written))
    print(
        f"""
{code} {name} is registered: `devfix explain {code}` shows its page, and the suite passes.
Next (CONTRIBUTING.md, "Adding a rule"):
  1. write check(), the docs and the examples in {rule_file}
  2. replace the two fixtures in tests/fixtures/{code}/ with real cases (add more: ok_* are
     correct code); drop `# devfix: pending` and `pending=True` once check() reports them
  3. python scripts/update_docs.py      # regenerates docs/rules.md and the README's table
  4. pytest --snapshot-update           # the whole suite, once the rule fixes its fixtures;
                                        # then read every new snapshot"""
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

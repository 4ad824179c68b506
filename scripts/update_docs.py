"""Regenerate what is written from the rule classes: docs/rules.md and the README's table of rules.

    python scripts/update_docs.py           # rewrite both (from the repository root)
    python scripts/update_docs.py --check   # only say whether they are current (exit 1 if not)

The README's table sits between two marker comments (`START` and `END` below); the text around
them is the README's own. `tests/test_rule_examples.py` checks both files are current.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
START = "<!-- rules-table: generated from the rule classes by `python scripts/update_docs.py`; do not edit -->"
END = "<!-- rules-table: end -->"


def with_rule_table(readme: str) -> str:
    """`readme` with the text between its markers replaced by the current table of rules."""
    from devfix.rules import rule_table

    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise SystemExit(f"README.md lacks the markers {START!r} and {END!r} around its table of rules")
    return f"{head}{START}\n\n{rule_table()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is out of date")
    parser.add_argument("--root", type=Path, default=REPOSITORY, help="the repository (default: this script's)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root))  # that repository's devfix, not an installed one
    from devfix.cli import rules_reference

    readme = args.root / "README.md"
    wanted = {
        args.root / "docs" / "rules.md": rules_reference(),
        readme: with_rule_table(readme.read_text(encoding="utf-8")),
    }
    stale = [path for path, text in wanted.items() if path.read_text(encoding="utf-8") != text]
    for path in stale:
        print(f"{'out of date' if args.check else 'updated'}: {path.relative_to(args.root)}")
        if not args.check:
            path.write_text(wanted[path], encoding="utf-8", newline="\n")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())

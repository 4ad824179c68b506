"""devfix on real repositories, against findings reviewed by hand.

    python eval/evaluate.py --repos DIR [--set SET|all] [--only NAME] [--unlabelled FILE]

DIR holds one checkout per repository of eval/repos.toml, named like its `name` (see
eval/checkout.sh). For each repository this runs devfix as `check` and as `apply --diff`
would (the same engine, in this process), and prints:

- whether `check` and `apply --diff` report the same findings at the same places;
- each finding's verdict from eval/labels/<name>.tsv (path, line, code, verdict, note):
  `real` (a device bug, fixed right or reported), `fp` (correct code; the edit, if any, is
  harmless) or `breaking` (the edit breaks a program that worked); precision is
  real / labelled, and breaking edits are counted apart;
- every real bug of the first reviewed run (eval/labels/first-run/) that is no longer found;
- the findings nobody has labelled yet, to review (written to --unlabelled as TSV rows with
  an empty verdict). The exit code is 1 while any finding is unlabelled, any first-run bug
  is lost, or check and apply disagree.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from devfix.config import Config  # noqa: E402
from devfix.files import discover  # noqa: E402
from devfix.results import FileResult  # noqa: E402
from devfix.runner import process_project  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Key = tuple[str, int, str]  # path relative to the repository, line, code
# Findings that only accompany a fix (the device declaration, the loader pinned for it):
# not bugs of their own when counting which first-run bugs are still found.
COMPANIONS = ("DEV001", "DEV005")


@dataclass
class Finding:
    path: str
    line: int
    column: int
    code: str
    status: str
    message: str

    @property
    def key(self) -> Key:
        return (self.path, self.line, self.code)


def run(repo: Path) -> tuple[list[Finding], list[Finding], int, list[str]]:
    """(findings of `check`, findings of `apply --diff`, files read, devfix's internal errors)
    for one checkout. An internal error leaves a file unchanged and unreported: counted here,
    so that a crash never passes for a finding no longer made."""
    checked, applied = [], []
    crashes: list[str] = []
    files = 0
    config = Config(root=repo)
    paths = list(discover([repo]))
    reads = [FileResult(str(path), data, data) for path in paths for data in (path.read_bytes(),)]
    files = len(reads)
    for fix, found in ((False, checked), (True, applied)):
        # one run over the checkout, as the CLI does: the files analysed together
        for path, result in zip(paths, process_project(reads, config, fix=fix)):
            relative = path.relative_to(repo).as_posix()
            found.extend(Finding(relative, d.line, d.column, d.code, d.status, d.message) for d in result.diagnostics)
            if result.error is not None and result.error.startswith("internal error") and not fix:
                crashes.append(f"{relative}: {result.error}")
    return checked, applied, files, crashes


def read_labels(path: Path) -> dict[Key, list[dict]]:
    labels: dict[Key, list[dict]] = {}
    if not path.exists():
        return labels
    with path.open(encoding="utf-8") as stream:
        for row in csv.DictReader(stream, delimiter="\t"):
            labels.setdefault((row["path"], int(row["line"]), row["code"]), []).append(row)
    return labels


def evaluate(
    name: str, checkout: Path, unlabelled_rows: list[list[str]], labelled_rows: list[list[str]]
) -> dict[str, int]:
    checked, applied, files, crashes = run(checkout)
    for crash in crashes:
        print(f"  internal error: {name}/{crash}")
    identity = lambda findings: sorted((f.path, f.line, f.column, f.code) for f in findings)  # noqa: E731
    agree = identity(checked) == identity(applied)
    labels = read_labels(HERE / "labels" / f"{name}.tsv")
    verdicts: Counter = Counter()
    used: dict[Key, int] = Counter()
    for finding in checked:
        rows = labels.get(finding.key, [])
        index = used[finding.key]
        used[finding.key] += 1
        if index < len(rows) and rows[index]["verdict"] in ("real", "fp", "breaking"):
            verdicts[rows[index]["verdict"]] += 1
            labelled_rows.append(
                [name, finding.path, str(finding.line), finding.code, rows[index]["verdict"], rows[index]["note"]]
            )
        else:
            verdicts["unlabelled"] += 1
            unlabelled_rows.append(
                [name, finding.path, str(finding.line), finding.code, "", f"[{finding.status}] {finding.message}"]
            )
    found = {f.key for f in checked}
    first = read_labels(HERE / "labels" / "first-run" / f"{name}.tsv")
    lost = sorted(
        key
        for key, rows in first.items()
        if key[2] not in COMPANIONS and any(r["verdict"] == "real" for r in rows) and key not in found
    )
    for key in lost:
        print(f"  first-run real bug no longer found: {name}/{key[0]}:{key[1]} {key[2]}")
    return {
        "files": files,
        "findings": len(checked),
        "agree": int(agree),
        "lost": len(lost),
        "crashes": len(crashes),
        **verdicts,
    }


def set_names() -> list[str]:
    """The sets named in eval/repos.toml, and "all": a new blind set needs no code change."""
    repositories = tomllib.loads((HERE / "repos.toml").read_text(encoding="utf-8"))["repo"]
    return [*sorted({r["set"] for r in repositories}), "all"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder with one checkout per repository")
    parser.add_argument("--set", choices=set_names(), default="all")
    parser.add_argument(
        "--only", action="append", default=[], metavar="NAME", help="evaluate only this repository (repeatable)"
    )
    parser.add_argument("--unlabelled", type=Path, help="write the findings nobody labelled yet here (TSV)")
    parser.add_argument(
        "--labelled", type=Path, help="write every labelled finding, with its verdict and note, here (TSV)"
    )
    options = parser.parse_args()
    repositories = tomllib.loads((HERE / "repos.toml").read_text(encoding="utf-8"))["repo"]
    chosen = [
        r for r in repositories if options.set in ("all", r["set"]) and (not options.only or r["name"] in options.only)
    ]
    unlabelled: list[list[str]] = []
    labelled_rows: list[list[str]] = []
    totals: Counter = Counter()
    header = f"{'repository':48} {'set':7} {'files':>5} {'found':>5} {'real':>4} {'fp':>4} {'break':>5} {'unlab':>5} {'prec':>6}  check=diff"
    print(header)
    for repo in chosen:
        checkout = options.repos / repo["name"]
        if not checkout.is_dir():
            print(f"{repo['name']:48} missing: check it out with eval/checkout.sh")
            totals["missing"] += 1
            continue
        row = evaluate(repo["name"], checkout, unlabelled, labelled_rows)
        totals.update(row)
        labelled = row.get("real", 0) + row.get("fp", 0) + row.get("breaking", 0)
        precision = f"{100 * row.get('real', 0) / labelled:5.1f}%" if labelled else "   n/a"
        print(
            f"{repo['name']:48} {repo['set']:7} {row['files']:5} {row['findings']:5} {row.get('real', 0):4} {row.get('fp', 0):4} "
            f"{row.get('breaking', 0):5} {row.get('unlabelled', 0):5} {precision}  {'yes' if row['agree'] else 'NO'}"
        )
    labelled = totals["real"] + totals["fp"] + totals["breaking"]
    precision = f"{100 * totals['real'] / labelled:5.1f}%" if labelled else "   n/a"
    print(
        f"{'total':48} {'':7} {totals['files']:5} {totals['findings']:5} {totals['real']:4} {totals['fp']:4} "
        f"{totals['breaking']:5} {totals['unlabelled']:5} {precision}  {len(chosen) - totals['missing'] - totals['agree']} disagree"
    )
    print(f"first-run real bugs no longer found: {totals['lost']}")
    print(f"files devfix failed on (internal errors): {totals['crashes']}")
    if options.unlabelled is not None and unlabelled:
        with options.unlabelled.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, delimiter="\t")
            writer.writerow(["repository", "path", "line", "code", "verdict", "finding"])
            writer.writerows(unlabelled)
        print(f"{len(unlabelled)} unlabelled findings written to {options.unlabelled}")
    if options.labelled is not None:
        with options.labelled.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream, delimiter="\t")
            writer.writerow(["repository", "path", "line", "code", "verdict", "note"])
            writer.writerows(labelled_rows)
    disagree = len(chosen) - totals["missing"] - totals["agree"]
    return 1 if unlabelled or totals["lost"] or disagree else 0


if __name__ == "__main__":
    sys.exit(main())

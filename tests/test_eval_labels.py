"""The evaluation's label files are read by column name (eval/evaluate.py): each must start with
the header row and hold one well-formed verdict per row, or the evaluation stops at that
repository (a helper once left the header out of nine files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

LABELS = Path(__file__).resolve().parent.parent / "eval" / "labels"
HEADER = ["path", "line", "code", "verdict", "note"]
FILES = sorted(LABELS.rglob("*.tsv"))


def test_there_are_label_files():
    assert len(FILES) > 1000


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(LABELS)) for p in FILES])
def test_label_file_is_well_formed(path: Path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines and lines[0].split("\t")[:5] == HEADER, f"{path.name}: the first line must be the header row"
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t")
        assert len(fields) >= 5, f"{path.name}:{number}: five tab-separated fields"
        assert fields[1].isdigit(), f"{path.name}:{number}: the line is a number"
        assert re.fullmatch(r"DEV\d{3}", fields[2]), f"{path.name}:{number}: a rule code"
        assert fields[3] in ("real", "fp", "breaking"), f"{path.name}:{number}: verdict {fields[3]!r}"

"""The review and CI workflow through the command line (issue 14)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from devfix.cli import main

HERE = Path(__file__).parent
HARD_CODED = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn

    model = nn.Linear(4, 2).cuda()
    print(model(torch.ones(1, 4).cuda()))
    """
)


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(HARD_CODED)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_rule_selected_alone_brings_the_declaration_it_needs(runner, project):
    """`apply --select DEV002`: a migration PR rule by rule; its fixes need `device`."""
    result = runner.invoke(main, ["apply", "--select", "DEV002", "train.py"])
    assert result.exit_code == 0, result.output
    fixed = (project / "train.py").read_text()
    assert "device = torch.device(" in fixed and ".cuda()" not in fixed
    assert "DEV001 [fixed]" in result.stdout and "Fixed 3 problems in 1 file" in result.stdout


def test_ignoring_the_declaration_rule_leaves_the_fixes_that_need_it(runner, project):
    result = runner.invoke(main, ["apply", "--select", "DEV002", "--ignore", "DEV001", "train.py"])
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == HARD_CODED
    assert "2 problems left to fix by hand" in result.stdout



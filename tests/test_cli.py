"""The command line, through click's CliRunner: exit codes, diff format, nothing written by --diff."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from devfix import __version__
from devfix.cli import main

BUGGY = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Linear(4, 2)
    out = net(torch.ones(1, 4).to(device))
    """
)
CLEAN = BUGGY.replace("nn.Linear(4, 2)", "nn.Linear(4, 2).to(device)")


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "notes.txt").write_text("torch")
    return tmp_path


def test_apply_fixes_in_place_and_reports_each_fix(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["apply", "."])
    assert result.exit_code == 0, result.output  # everything found was fixed
    assert runner.invoke(main, ["apply", "."]).exit_code == 0  # and nothing is left
    assert (project / "train.py").read_text() == CLEAN
    assert (
        "train.py:5:7: DEV003 [fixed] model 'net' is built on the CPU and meets values on the device (line 6"
        in result.output
    )
    assert "Fixed 1 problem in 1 file (2 files checked)." in result.output


def test_diff_is_a_dry_run_with_git_style_paths(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["apply", "--diff", "train.py"])
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == BUGGY, "--diff must write nothing"
    assert "--- a/train.py\n+++ b/train.py\n" in result.stdout
    assert "-net = nn.Linear(4, 2)\n+net = nn.Linear(4, 2).to(device)\n" in result.stdout
    assert "train.py:5:7: DEV003 [would fix] model 'net'" in result.stderr
    assert "Would fix 1 problem" in result.stderr


def test_diff_exits_zero_when_nothing_would_change(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["apply", "--diff", "clean.py"])
    assert result.exit_code == 0
    assert result.stdout == ""


def test_check_reports_without_fixing(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["check", "."])
    assert result.exit_code == 1
    assert "train.py:5:7: DEV003 [*] model 'net'" in result.output
    assert (project / "train.py").read_text() == BUGGY
    assert runner.invoke(main, ["check", "clean.py"]).exit_code == 0


def test_a_finding_is_one_line_even_when_its_code_spans_lines(runner, tmp_path, monkeypatch):
    (tmp_path / "net.py").write_text(
        "import torch.nn as nn\n\nmodel = nn.Sequential(\n    nn.Linear(2, 2),\n).cuda()\n"
    )
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "."])
    findings = [line for line in result.output.splitlines() if "DEV0" in line]
    assert findings and all(line.startswith("net.py:3:") for line in findings), result.output
    assert "`nn.Sequential( nn.Linear(2, 2), ).cuda()` hard-codes CUDA" in result.output


def test_json_output(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["check", "--format", "json", "train.py"])
    items = json.loads(result.stdout)
    assert [(i["code"], i["line"], i["column"], i["status"]) for i in items] == [("DEV003", 5, 7, "fixable")]


@pytest.mark.parametrize(
    "args,message",
    [
        (["apply", "missing_dir"], "devfix: error: path 'missing_dir' does not exist"),
        (["apply", "--no-such-option", "."], "devfix: error: No such option"),
        (["check", "--select", "DEV999", "."], "devfix: error: unknown rule selector"),
        (["explain", "nothing"], "devfix: error: unknown rule 'nothing'"),
    ],
)
def test_user_errors_exit_2_with_one_line(runner, project, monkeypatch, args, message):
    monkeypatch.chdir(project)
    result = runner.invoke(main, args)
    assert result.exit_code == 2
    assert result.output.startswith(message)
    assert len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_select_and_ignore(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    assert runner.invoke(main, ["check", "--ignore", "DEV003", "train.py"]).exit_code == 0
    assert runner.invoke(main, ["check", "--select", "model-placement", "train.py"]).exit_code == 1


def test_pyproject_configuration_is_read_and_validated(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    (project / "pyproject.toml").write_text('[tool.devfix]\nignore = ["DEV003"]\n')
    assert runner.invoke(main, ["check", "train.py"]).exit_code == 0
    (project / "pyproject.toml").write_text('[tool.devfix]\ndevice-style = "quantum"\n')
    result = runner.invoke(main, ["check", "train.py"])
    assert result.exit_code == 2 and "device-style" in result.output


def test_gitignore_virtualenvs_and_hidden_dirs_are_skipped(runner, project, monkeypatch):
    monkeypatch.chdir(project)
    for folder in ("ignored", ".hidden", "venv_x", "build"):
        (project / folder).mkdir()
        (project / folder / "t.py").write_text(BUGGY)
    (project / "venv_x" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / ".gitignore").write_text("ignored/\n")
    result = runner.invoke(main, ["check", "."])
    assert "ignored" not in result.output and ".hidden" not in result.output
    assert "venv_x" not in result.output and "build" not in result.output
    assert "(2 files checked)" in result.output


def test_version_help_and_rule_docs(runner):
    assert __version__ in runner.invoke(main, ["--version"]).output
    for command in ("apply", "check", "rules", "explain"):
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output
    listing = runner.invoke(main, ["rules"]).output
    assert "DEV001  device-declaration" in listing
    page = runner.invoke(main, ["explain", "DEV003"]).output
    assert "## Why is this bad?" in page and "## Use instead" in page


def test_python_dash_m_entry_point():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "devfix", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and __version__ in result.stdout


def test_examples_diff_shows_reviewable_fixes(runner):
    examples = Path(__file__).parent.parent / "examples"
    result = runner.invoke(main, ["apply", "--diff", str(examples)])
    assert result.exit_code == 1
    assert '+device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in result.stdout
    assert '-    device = torch.device("cuda:1")' in result.stdout


def test_a_fix_that_does_not_parse_is_dropped_and_reported(monkeypatch):
    """The engine never returns code that does not parse, and keeps the other fixes."""
    import libcst as cst

    from devfix.config import Config
    from devfix.engine import process_source
    from devfix.rules.dev002_hard_coded_cuda import HardCodedCuda

    real = HardCodedCuda._fix

    def broken_fix(self, ctx, call, message, build):
        finding = real(self, ctx, call, message, build)
        if "zeros" in message:  # make this one fix emit an invalid tree
            from devfix.edits import Replace

            invalid = cst.Attribute(value=cst.Integer("1"), attr=cst.Name("real"))  # `1.real`
            finding = self.finding(call, message, [Replace(call, invalid)])
        return finding

    monkeypatch.setattr(HardCodedCuda, "_fix", broken_fix)
    header = b"import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    source = header + b"a = torch.zeros(2).cuda()\nb = torch.ones(2).cuda()\n"
    result = process_source(source, Config(), fix=True)
    assert result.error is None
    assert result.new == header + b"a = torch.zeros(2).cuda()\nb = torch.ones(2).to(device)\n"
    dropped = [d for d in result.diagnostics if d.status == "no-fix"]
    assert len(dropped) == 1 and "does not parse" in dropped[0].hint


def test_findings_are_told_apart_by_position_not_by_message(runner, tmp_path, monkeypatch):
    """Two findings with the same text at two lines are two findings (issue: `check` used to
    drop the second); positions are those of the original file, also in a dry run."""
    source = textwrap.dedent(
        """\
        import torch
        from torch import nn

        model = nn.Linear(2, 2).cuda()
        x = torch.ones(1, 2).cuda()
        x = torch.ones(1, 2).cuda()
        print(model(x))
        """
    )
    (tmp_path / "twice.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    check = runner.invoke(main, ["check", "twice.py"])
    diff = runner.invoke(main, ["apply", "--diff", "twice.py"])
    found = [line.split(" [")[0] for line in check.output.splitlines() if ": DEV" in line]
    would = [line.split(" [")[0] for line in diff.stderr.splitlines() if ": DEV" in line]
    assert found == would  # the same findings, at the same original positions
    assert "twice.py:5:5: DEV002" in found and "twice.py:6:5: DEV002" in found
    assert all(int(line.split(":")[1]) <= len(source.splitlines()) for line in found)


def test_dry_run_diff_keeps_unchanged_blank_lines_as_context(runner, tmp_path, monkeypatch):
    """difflib's "autojunk" heuristic treats frequent lines of long files (blank ones) as junk
    and shows them as removed and added again; the diff a reviewer reads must not."""
    filler = "".join(f"def helper_{i}():\n    return {i}\n\n" for i in range(80))
    source = (
        "import torch\nfrom torch import nn\n\n"
        + filler
        + "model = nn.Linear(2, 2).cuda()\n\nx = torch.ones(1, 2).cuda()\nprint(model(x))\n"
    )
    (tmp_path / "long.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    diff = runner.invoke(main, ["apply", "--diff", "long.py"]).stdout
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ["-model = nn.Linear(2, 2).cuda()", "-x = torch.ones(1, 2).cuda()"], (
        diff
    )  # no blank line "removed"


def test_gpu_choice_in_another_file_keeps_declarations_off_import_time(runner, tmp_path, monkeypatch):
    """`train.py` picks its GPU through CUDA_VISIBLE_DEVICES, by calling a helper of
    `utils.py`; a module-level declaration in `layers.py`, which it imports, would query CUDA
    at import time, before that choice. The files of one run are analysed together (spec
    principle 9); a script of another sub-project, which imports none of them, runs in its own
    process and gets its declaration."""
    (tmp_path / "utils.py").write_text(
        textwrap.dedent(
            """\
        import os


        def auto_select_gpu(gpu):
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu
        """
        )
    )
    (tmp_path / "layers.py").write_text(
        textwrap.dedent(
            """\
        import torch

        SCALE = torch.ones(4).cuda()
        """
        )
    )
    (tmp_path / "train.py").write_text(
        textwrap.dedent(
            """\
        import torch
        from torch import nn

        import layers
        import utils


        def main():
            utils.auto_select_gpu("1")
            model = nn.Linear(4, 2).cuda()
            print(model(torch.randn(3, 4)))


        main()
        """
        )
    )
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "demo.py").write_text("import torch\n\nprint(torch.ones(2).cuda())\n")
    monkeypatch.chdir(tmp_path)
    together = runner.invoke(main, ["apply", "--diff", "."])
    assert "layers.py:3:9: DEV002 [no-fix]" in together.stderr
    assert "other/demo.py:3:7: DEV002 [would fix]" in together.stderr
    assert "+    device = torch.device" in together.stdout  # in main(), after the helper's call
    assert together.stdout.index('utils.auto_select_gpu("1")') < together.stdout.index("+    device = torch.device")
    alone = runner.invoke(main, ["apply", "--diff", "layers.py"])
    assert "+device = torch.device" in alone.stdout  # nothing else in the run chooses a GPU


def test_inline_suppression_through_the_cli(runner, tmp_path, monkeypatch):
    """A deliberate `.cuda()` silenced on its line: `check` is clean and exits 0."""
    (tmp_path / "bench.py").write_text("import torch\n\nx = torch.ones(2).cuda()  # devfix: ignore[DEV002]\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "bench.py"])
    assert result.exit_code == 0, result.output
    assert "DEV002" not in result.output


HELPER_MOVED = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn
    from helpers import tensor_type

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Linear(4, 2).to(device)
    out = net(torch.ones(1, 4).type(tensor_type()))
    """
)


def test_what_was_not_covered_is_said_in_one_line_and_listed_on_request(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(HELPER_MOVED)  # a tensor type from a helper devfix cannot see
    result = runner.invoke(main, ["check", "train.py"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == (
        "Not covered: at 1 place in 1 file a value meets one whose device devfix cannot tell; "
        "left alone (`--show-undecided` lists them)."
    )
    listed = runner.invoke(main, ["check", "--show-undecided", "train.py"]).output.splitlines()
    assert listed[0] == (
        "train.py:7:7: undecided: `net(torch.ones(1, 4).type(tensor_type()))` meets a value whose device "
        "devfix cannot tell; left alone"
    )
    assert "Not covered" not in runner.invoke(main, ["check", "-q", "train.py"]).output
    (tmp_path / "train.py").write_text(CLEAN)
    assert "Not covered" not in runner.invoke(main, ["check", "train.py"]).output

"""The review and CI workflow through the command line (issue 14): output formats and where
each goes, statistics, exit codes, fix control rule by rule, unsafe fixes counted apart."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from xml.etree import ElementTree

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
PLAIN_LIST = (
    (HERE / "fixtures" / "DEV013" / "append_in_init.py").read_text().split("\n", 1)[1]
)  # without its `--unsafe-fixes` line


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(HARD_CODED)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_format_is_an_alias_of_output_format(runner, project):
    one = runner.invoke(main, ["check", "--format", "json", "train.py"])
    other = runner.invoke(main, ["check", "--output-format", "json", "train.py"])
    assert one.exit_code == other.exit_code == 1
    assert one.stdout == other.stdout and json.loads(one.stdout)


def test_json_carries_the_range_rule_status_and_edit_of_each_finding(runner, project):
    items = json.loads(runner.invoke(main, ["check", "--output-format", "json", "train.py"]).stdout)
    dev002 = [item for item in items if item["code"] == "DEV002"]
    first = dev002[0]
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (4, 9, 4, 31)
    assert first["name"] == "hard-coded-cuda" and first["status"] == "fixable"
    assert first["fix"]["applicability"] == "safe" and first["fix"]["applied"] is False
    assert first["fix"]["edits"] == [
        {
            "kind": "replace",
            "location": {"line": 4, "column": 9},
            "end_location": {"line": 4, "column": 31},
            "content": "nn.Linear(4, 2).to(device)",
        }
    ]
    declaration = next(item for item in items if item["code"] == "DEV001")
    assert declaration["fix"]["edits"][0]["kind"] in ("insert-before", "insert-after")
    assert "device = torch.device(" in declaration["fix"]["edits"][0]["content"]


def test_a_finding_without_a_fix_has_no_edit(runner, project):
    items = json.loads(runner.invoke(main, ["check", "--format", "json", "--ignore", "DEV001", "train.py"]).stdout)
    assert items and all(item["status"] == "no-fix" and item["fix"] is None for item in items)


def test_the_diff_and_a_machine_format_never_share_a_stream(runner, project):
    result = runner.invoke(main, ["apply", "--diff", "--output-format", "json", "train.py"])
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/train.py\n+++ b/train.py\n")
    assert "[" not in result.stdout.splitlines()[0]
    items = json.loads(result.stderr)  # the report alone on stderr
    assert {item["status"] for item in items} == {"fixed"} and all(item["fix"]["applied"] for item in items)
    assert (project / "train.py").read_text() == HARD_CODED


def test_output_file_takes_the_report_and_leaves_stdout_to_the_diff(runner, project):
    result = runner.invoke(
        main, ["apply", "--diff", "--output-format", "sarif", "--output-file", "out/report.sarif", "train.py"]
    )
    assert result.exit_code == 1
    assert result.stdout.startswith("--- a/train.py") and result.stderr == ""
    sarif = json.loads((project / "out" / "report.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    check = runner.invoke(main, ["check", "-o", "report.txt", "train.py"])
    assert check.exit_code == 1 and check.output == ""
    text = (project / "report.txt").read_text()
    assert "train.py:4:9: DEV002 [*]" in text and text.rstrip().endswith("(1 file checked).")


def test_each_ci_format_is_well_formed(runner, project):
    (project / "broken.py").write_text("import torch\nx = (\n")
    outputs = {}
    for name in ("github", "sarif", "gitlab", "junit"):
        result = runner.invoke(main, ["check", "--output-format", name, "."])
        assert result.exit_code == 2, (name, result.output)  # a file that cannot be parsed wins
        outputs[name] = result.stdout
    github = outputs["github"].splitlines()
    assert (
        "::error title=devfix (DEV002),file=train.py,line=4,col=9,endLine=4,endColumn=31::DEV002 [fixable]"
        in outputs["github"]
    )
    assert any(line.startswith("::error file=broken.py,title=devfix::cannot parse") for line in github)
    sarif = json.loads(outputs["sarif"])
    run = sarif["runs"][0]
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {"DEV001", "DEV002", "DEV013"}
    region = next(r for r in run["results"] if r["ruleId"] == "DEV002")["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 9, "endLine": 4, "endColumn": 31}
    assert run["invocations"][0]["executionSuccessful"] is False
    gitlab = json.loads(outputs["gitlab"])
    assert {issue["check_name"] for issue in gitlab} >= {"DEV002", "devfix/error"}
    assert len({issue["fingerprint"] for issue in gitlab}) == len(gitlab)
    assert all(issue["location"]["path"] in ("train.py", "broken.py") for issue in gitlab)
    junit = ElementTree.fromstring(outputs["junit"])
    assert junit.tag == "testsuites" and int(junit.get("failures")) >= 3 and junit.get("errors") == "1"


def test_notebook_findings_name_their_cell_in_every_format(runner, tmp_path, monkeypatch):
    shutil.copytree(HERE / "fixtures" / "notebooks" / "hard_coded_cuda_script_written", tmp_path / "nb")
    monkeypatch.chdir(tmp_path / "nb")
    notebook = sorted(Path(".").glob("*.ipynb"))[0].name
    items = json.loads(runner.invoke(main, ["check", "--format", "json", notebook]).stdout)
    assert items and all(isinstance(item["cell"], int) for item in items)
    assert all(edit.get("cell") for item in items if item["fix"] for edit in item["fix"]["edits"])
    github = runner.invoke(main, ["check", "--format", "github", notebook]).stdout
    assert "line=" not in github and f"file={notebook}::cell " in github  # never a line of the notebook's JSON
    sarif = json.loads(runner.invoke(main, ["check", "--format", "sarif", notebook]).stdout)
    assert all("cell" in result["properties"] for result in sarif["runs"][0]["results"])


def test_statistics_count_findings_per_rule(runner, project):
    result = runner.invoke(main, ["check", "--statistics", "train.py"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["2", "DEV002", "hard-coded-cuda", "(2", "fixable)"]
    assert lines[1].split()[:2] == ["1", "DEV001"]
    assert "train.py:4:9" not in result.stdout and lines[-1].startswith("Found 3 problems")
    rows = json.loads(runner.invoke(main, ["check", "--statistics", "--format", "json", "train.py"]).stdout)
    assert rows[0] == {"code": "DEV002", "name": "hard-coded-cuda", "count": 2, "statuses": {"fixable": 2}}
    refused = runner.invoke(main, ["check", "--statistics", "--format", "sarif", "train.py"])
    assert refused.exit_code == 2 and "--statistics" in refused.output


def test_exit_zero_keeps_errors_at_two(runner, project):
    assert runner.invoke(main, ["check", "--exit-zero", "train.py"]).exit_code == 0
    assert runner.invoke(main, ["apply", "--diff", "--exit-zero", "train.py"]).exit_code == 0
    (project / "broken.py").write_text("import torch\nx = (\n")
    assert runner.invoke(main, ["check", "--exit-zero", "."]).exit_code == 2


def test_quiet_prints_findings_without_the_summary(runner, project):
    result = runner.invoke(main, ["check", "-q", "train.py"])
    assert result.exit_code == 1
    assert "train.py:4:9: DEV002 [*]" in result.stdout and "Found" not in result.output


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


def test_unsafe_fixes_are_counted_apart_and_leave_apply_successful(runner, tmp_path, monkeypatch):
    (tmp_path / "stack.py").write_text(PLAIN_LIST)
    monkeypatch.chdir(tmp_path)
    applied = runner.invoke(main, ["apply", "stack.py"])
    assert applied.exit_code == 0, applied.output  # nothing is left for a person to do
    assert "1 more fix available with `--unsafe-fixes`" in applied.stdout
    assert "by hand" not in applied.stdout
    assert (tmp_path / "stack.py").read_text() == PLAIN_LIST
    checked = runner.invoke(main, ["check", "stack.py"])
    assert checked.exit_code == 1
    assert "Found 1 problem (1 more fix available with `--unsafe-fixes`)" in checked.stdout
    unsafe = runner.invoke(main, ["apply", "--unsafe-fixes", "stack.py"])
    assert unsafe.exit_code == 0 and "nn.ModuleList" in (tmp_path / "stack.py").read_text()


@pytest.fixture
def monorepo(tmp_path, monkeypatch):
    """A repository whose sub-project `b` has its own configuration, and a legacy folder the
    root configuration excludes."""
    (tmp_path / "pyproject.toml").write_text('[tool.devfix]\nextend-exclude = ["a/legacy/"]\n')
    for folder in ("a", "b", "a/legacy"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(HARD_CODED)
    (tmp_path / "b" / "pyproject.toml").write_text('[project]\nname = "b"\n\n[tool.devfix]\nignore = ["DEV002"]\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _codes(output: str, prefix: str):
    return sorted({line.split(": ")[1].split()[0] for line in output.splitlines() if line.startswith(prefix)})


def test_the_nearest_configuration_applies_to_each_file(runner, monorepo):
    result = runner.invoke(main, ["check", "."])
    assert _codes(result.stdout, "a/train.py") == ["DEV001", "DEV002"]
    assert _codes(result.stdout, "b/train.py") == []  # b ignores DEV002, and so needs no declaration
    assert "(2 files checked)" in result.stdout  # a/legacy excluded


def test_the_order_of_paths_does_not_change_the_result(runner, monorepo):
    forward = runner.invoke(main, ["check", "a", "b"])
    backward = runner.invoke(main, ["check", "b", "a"])
    assert forward.exit_code == backward.exit_code == 1
    assert forward.stdout == backward.stdout
    assert runner.invoke(main, ["check", "b"]).exit_code == 0  # b's own table, read for b's files


def test_excludes_are_anchored_at_the_configuration_folder(runner, monorepo, monkeypatch):
    assert "legacy" not in runner.invoke(main, ["check", "a"]).stdout  # not matched from `a`, but from the root
    monkeypatch.chdir(monorepo / "a")
    assert "legacy" not in runner.invoke(main, ["check", "."]).stdout
    assert "(1 file checked)" in runner.invoke(main, ["check", "."]).stdout


def test_force_exclude_applies_excludes_to_named_files(runner, monorepo):
    named = runner.invoke(main, ["check", "a/legacy/train.py"])
    assert named.exit_code == 1 and "a/legacy/train.py:4:9" in named.stdout  # named: checked, as ruff does
    forced = runner.invoke(main, ["check", "--force-exclude", "a/legacy/train.py", "a/train.py"])
    assert "legacy" not in forced.stdout and "(1 file checked)" in forced.stdout
    (monorepo / "a" / "legacy" / "train.py").write_text(HARD_CODED)
    assert runner.invoke(main, ["apply", "--force-exclude", "a/legacy/train.py"]).exit_code == 0
    assert (monorepo / "a" / "legacy" / "train.py").read_text() == HARD_CODED
    cli_pattern = runner.invoke(main, ["check", "--force-exclude", "--exclude", "a/train.py", "a/train.py"])
    assert "(0 files checked)" in cli_pattern.stdout


def test_config_option_applies_one_file_to_every_path(runner, monorepo):
    (monorepo / "strict.toml").write_text('[tool.devfix]\nignore = ["DEV001"]\n')
    result = runner.invoke(main, ["check", "--config", "strict.toml", "a", "b"])
    assert _codes(result.stdout, "a/train.py") == ["DEV002"] and _codes(result.stdout, "b/train.py") == ["DEV002"]


def test_invalid_toml_is_an_error_naming_the_file_and_line(runner, monorepo):
    (monorepo / "b" / "pyproject.toml").write_text('[tool.devfix]\nignore = ["DEV002"]\nunsafe-fixes = \n')
    result = runner.invoke(main, ["check", "b"])
    assert result.exit_code == 2
    assert "b/pyproject.toml: invalid TOML:" in result.output and "line 3" in result.output
    assert len(result.output.strip().splitlines()) == 1
    (monorepo / "b" / "pyproject.toml").write_text('[tool.devfix]\nignore = ["DEV999"]\n')
    unknown = runner.invoke(main, ["check", "b"])
    assert unknown.exit_code == 2 and "b/pyproject.toml: unknown rule selector 'DEV999'" in unknown.output


def test_show_settings_prints_the_resolved_configuration_of_a_file(runner, monorepo):
    result = runner.invoke(main, ["show-settings", "b/train.py"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Settings for b/train.py"
    assert any(line.startswith("configuration = ") and line.endswith('b/pyproject.toml"') for line in lines)
    assert 'ignore = ["DEV002"]' in lines and "excluded = false" in lines
    assert "DEV002" not in next(line for line in lines if line.startswith("rules = "))
    legacy = runner.invoke(main, ["show-settings", "a/legacy/train.py"]).stdout.splitlines()
    assert 'extend-exclude = ["a/legacy/"]' in legacy and "excluded = true" in legacy
    selected = runner.invoke(main, ["show-settings", "--select", "DEV003", "a/train.py"]).stdout
    assert 'rules = ["DEV003"]' in selected


def test_per_file_ignores_silence_rules_for_matching_files(runner, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.devfix]\n[tool.devfix.per-file-ignores]\n"benchmarks/" = ["DEV002"]\n"*_gpu.py" = ["DEV001", "DEV002"]\n'
    )
    for name in ("benchmarks/speed.py", "train.py", "models/check_gpu.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(HARD_CODED)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "."])
    assert _codes(result.stdout, "train.py") == ["DEV001", "DEV002"]
    assert _codes(result.stdout, "benchmarks/") == [] and _codes(result.stdout, "models/") == []
    shown = runner.invoke(main, ["show-settings", "benchmarks/speed.py"]).stdout.splitlines()
    assert 'ignore = ["DEV002"]' in shown
    (tmp_path / "pyproject.toml").write_text('[tool.devfix]\nper-file-ignores = {"x.py" = ["DEV998"]}\n')
    bad = runner.invoke(main, ["check", "."])
    assert bad.exit_code == 2 and "unknown rule selector 'DEV998'" in bad.output
    (tmp_path / "pyproject.toml").write_text('[tool.devfix]\nper-file-ignores = ["x.py"]\n')
    assert "must be a table" in runner.invoke(main, ["check", "."]).output


SUPPRESSED = textwrap.dedent(
    """\
    import torch

    x = torch.ones(2).cuda()  # devfix: ignore[DEV002]
    y = torch.ones(2)  # devfix: ignore[DEV002, DEV999]
    z = torch.zeros(2)  # devfix: ignore
    print(x, y, z)
    """
)


def test_check_reports_unknown_and_unused_suppressions(runner, tmp_path, monkeypatch):
    (tmp_path / "bench.py").write_text(SUPPRESSED)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, ["check", "bench.py"])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:3] == [
        "bench.py:4:20: unknown rule code DEV999 in a suppression; `devfix rules` lists them",
        "bench.py:4:20: unused suppression: DEV002 found nothing on this line",
        "bench.py:5:21: unused suppression: `# devfix: ignore` silences nothing on this line",
    ]
    items = json.loads(runner.invoke(main, ["check", "--format", "json", "bench.py"]).stdout)
    assert {item["code"] for item in items} == {"suppression"}
    # a rule that did not run is not judged: its comments may be right
    assert "DEV002 found nothing" not in runner.invoke(main, ["check", "--select", "DEV003", "bench.py"]).stdout
    assert runner.invoke(main, ["apply", "bench.py"]).exit_code == 0  # not a device bug to fix


def test_add_ignore_silences_todays_findings_so_check_passes(runner, tmp_path, monkeypatch):
    shutil.copytree(HERE.parent / "examples", tmp_path / "examples")
    (tmp_path / "examples" / "more.py").write_text(
        'import torch\nmsg = """\nx""" + str(torch.ones(2).cuda())\ny = torch.ones(2).cuda()  # noqa: E501\n'
    )
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["check", "examples"]).exit_code == 1
    result = runner.invoke(main, ["add-ignore", "examples"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Added ") and "suppressions to 6 files" in result.stdout
    after = runner.invoke(main, ["check", "examples"])
    assert after.exit_code == 0, after.output
    more = (tmp_path / "examples" / "more.py").read_text()
    assert 'x""" + str(torch.ones(2).cuda())  # devfix: ignore[DEV002]\n' in more  # after the string's end
    assert "y = torch.ones(2).cuda()  # noqa: E501  # devfix: ignore[DEV002]\n" in more
    cnn = (tmp_path / "examples" / "cnn_classifier.py").read_text()
    assert "model = SimpleCNN().cuda()  # devfix: ignore[DEV002]\n" in cnn  # its declaration needs no comment
    again = runner.invoke(main, ["add-ignore", "examples"])
    assert again.stdout == "Added 0 suppressions to 0 files.\n"


def test_add_ignore_merges_codes_and_names_lines_it_cannot_comment(runner, tmp_path, monkeypatch):
    from devfix.suppressions import add_ignores

    source = b"a = 1  # devfix: ignore[DEV004]\r\nb = (1 +\\\n  2)\nc = '''\n'''\n"
    new, refused = add_ignores(source, {1: ["DEV002"], 2: ["DEV002"], 4: ["DEV009"], 5: ["DEV009"]})
    assert (
        new == b"a = 1  # devfix: ignore[DEV002, DEV004]\r\nb = (1 +\\\n  2)\nc = '''\n'''  # devfix: ignore[DEV009]\n"
    )
    assert refused == [2, 4]


def test_stdin_source_is_fixed_to_stdout_with_the_report_on_stderr(runner, project):
    result = runner.invoke(main, ["apply", "-", "--stdin-filename", "train.py"], input=HARD_CODED)
    assert result.exit_code == 0, result.stderr
    assert "model = nn.Linear(4, 2).to(device)" in result.stdout and "device = torch.device(" in result.stdout
    assert "train.py:4:9: DEV002 [fixed]" in result.stderr and "train.py:4:9" not in result.stdout
    assert (project / "train.py").read_text() == HARD_CODED  # nothing written
    checked = runner.invoke(main, ["check", "--format", "json", "-"], input=HARD_CODED)
    assert checked.exit_code == 1 and {item["path"] for item in json.loads(checked.stdout)} == {"-"}
    diff = runner.invoke(main, ["apply", "--diff", "-", "--stdin-filename", "train.py"], input=HARD_CODED)
    assert diff.stdout.startswith("--- a/train.py\n") and diff.exit_code == 1


def test_stdin_takes_the_configuration_and_excludes_of_its_name(runner, monorepo):
    # b/pyproject.toml ignores DEV002: the source read as b/x.py needs nothing
    as_b = runner.invoke(main, ["apply", "-", "--stdin-filename", "b/x.py"], input=HARD_CODED)
    assert as_b.exit_code == 0 and as_b.stdout == HARD_CODED
    forced = runner.invoke(
        main, ["apply", "--force-exclude", "-", "--stdin-filename", "a/legacy/x.py"], input=HARD_CODED
    )
    assert forced.exit_code == 0 and forced.stdout == HARD_CODED  # excluded: passed through untouched
    assert runner.invoke(main, ["add-ignore", "-"], input=HARD_CODED).exit_code == 2


def test_files_from_lists_paths_one_a_line(runner, monorepo):
    (monorepo / "list.txt").write_text("b/train.py\n\na/train.py\n")
    from_file = runner.invoke(main, ["check", "--files-from", "list.txt"])
    from_stdin = runner.invoke(main, ["check", "--files-from", "-"], input="a/train.py\nb/train.py\n")
    assert from_file.exit_code == from_stdin.exit_code == 1
    assert from_file.stdout == from_stdin.stdout and "(2 files checked)" in from_file.stdout
    nothing = runner.invoke(main, ["check"])
    assert nothing.exit_code == 2 and "no paths given" in nothing.output
    mixed = runner.invoke(main, ["check", "-", "a"], input=HARD_CODED)
    assert mixed.exit_code == 2 and "cannot be combined" in mixed.output


def test_colour_only_on_a_terminal_and_never_with_no_color(runner, project, monkeypatch):
    piped = runner.invoke(main, ["check", "train.py"])
    assert "\x1b[" not in piped.output  # not a terminal: click drops the styles
    terminal = runner.invoke(main, ["check", "train.py"], color=True)  # as if stdout were a terminal
    assert "\x1b[1mtrain.py:4:9\x1b[0m" in terminal.stdout and "\x1b[31m\x1b[1mDEV002\x1b[0m" in terminal.stdout
    assert runner.invoke(main, ["apply", "--diff", "train.py"], color=True).stdout.count("\x1b[32m+") >= 2
    runner.invoke(main, ["check", "-o", "report.txt", "train.py"], color=True)
    assert "\x1b[" not in (project / "report.txt").read_text()
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in runner.invoke(main, ["check", "train.py"], color=True).output
    assert "\x1b[" not in runner.invoke(main, ["apply", "--diff", "train.py"], color=True).output


def test_progress_is_drawn_on_stderr_only_for_a_terminal(runner, project, monkeypatch):
    (project / "other.py").write_text(HARD_CODED)
    plain = runner.invoke(main, ["check", "."])
    assert plain.stderr == ""
    from devfix.report import terminal

    monkeypatch.setattr(terminal, "stderr_is_terminal", lambda: True)
    drawn = runner.invoke(main, ["check", "."])
    assert drawn.stderr.startswith("devfix") and drawn.stdout == plain.stdout  # stdout untouched
    assert runner.invoke(main, ["check", "-q", "."]).stderr == ""


def test_summary_md_describes_the_fixes_per_rule_for_a_pull_request(runner, tmp_path, monkeypatch):
    shutil.copytree(HERE.parent / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    dry = runner.invoke(main, ["apply", "--diff", "--summary-md", "pr.md", "examples"])
    assert dry.exit_code == 1 and "pr.md" not in dry.stdout
    text = (tmp_path / "pr.md").read_text()
    assert text.startswith("# devfix: device-placement fixes\n\ndevfix would fix 18 problems in 5 files (5 checked).")
    assert "| DEV006 dataset-off-cpu-path | 4 |" in text and "| DEV002 hard-coded-cuda | 1 |" in text
    section = text.split("## DEV001 device-declaration (3)")[1].split("\n## ")[0]
    assert (
        '+device = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in section
    )  # its own edit, not the line it is reported at
    assert (
        "Files: `examples/cnn_classifier.py`, `examples/imbalanced_classes.py`, `examples/tabular_regression.py`"
        in section
    )
    assert text.count("```diff") == 8  # one example per rule
    applied = runner.invoke(main, ["apply", "--summary-md", "pr.md", "examples"])
    assert applied.exit_code == 0 and "devfix fixed 18 problems" in (tmp_path / "pr.md").read_text()
    runner.invoke(main, ["apply", "--summary-md", "pr.md", "examples"])
    assert (tmp_path / "pr.md").read_text() == "# devfix: device-placement fixes\n\nNo fixes (5 files checked).\n"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_readme_migration_walkthrough_works_as_written(tmp_path):
    """Every line of the README's walkthrough, run in a shell on a copy of examples/ in a git
    repository; each `# exit N` comment is checked."""
    import os
    import re
    import subprocess
    import sys

    readme = (HERE.parent / "README.md").read_text()
    block = readme.split("<!-- walkthrough -->\n```sh\n", 1)[1].split("```", 1)[0]
    repo = tmp_path / "repo"
    shutil.copytree(HERE.parent / "examples", repo / "examples")
    # `devfix` is this interpreter's devfix, installed as a command or only importable (a
    # machine that runs the suite from a source tree on PYTHONPATH has no console script)
    shim = tmp_path / "bin" / "devfix"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m devfix "$@"\n')
    shim.chmod(0o755)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(shim.parent), os.path.dirname(sys.executable), os.environ.get("PATH", "")]),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "NO_COLOR": "1",
    }
    for setup in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "examples"]):
        subprocess.run(setup, cwd=repo, env=env, check=True)
    for line in block.strip().splitlines():
        command, _, comment = line.partition("#")
        expected = re.match(r"\s*exit (\d+)", comment) if command.strip() else None
        if "git commit" in line:
            command, expected = line, None
        run = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True)
        if expected is not None:
            assert run.returncode == int(expected.group(1)), (line, run.stdout, run.stderr)
        else:
            assert run.returncode == 0, (line, run.stdout, run.stderr)
    assert "@@" in (repo / "dev002.patch").read_text()
    assert "## DEV002 hard-coded-cuda (1)" in (repo / "pr-dev002.md").read_text()
    assert "## DEV006 dataset-off-cpu-path (4)" in (repo / "pr.md").read_text()


def test_interactive_asks_per_file(runner, project):
    (project / "other.py").write_text(HARD_CODED)
    some = runner.invoke(main, ["apply", "--interactive", "."], input="y\nn\n")
    assert some.exit_code == 1, some.output  # the declined file's problems are left
    assert "--- a/other.py" in some.stdout and "Apply the fixes to other.py?" in some.stdout
    assert ".cuda()" not in (project / "other.py").read_text() and (project / "train.py").read_text() == HARD_CODED
    assert "train.py:4:9: DEV002 [*]" in some.stdout and "3 problems left to fix by hand" in some.stdout
    (project / "other.py").write_text(HARD_CODED)
    assert runner.invoke(main, ["apply", "-i", "."], input="q\n").exit_code == 1
    assert (project / "other.py").read_text() == HARD_CODED
    everything = runner.invoke(main, ["apply", "-i", "."], input="a\n")
    assert everything.exit_code == 0 and everything.stdout.count("Apply the fixes") == 1
    assert ".cuda()" not in (project / "train.py").read_text()
    refused = runner.invoke(main, ["apply", "-i", "--diff", "."])
    assert refused.exit_code == 2 and "--interactive" in refused.output


def test_format_with_runs_the_formatter_on_the_written_files(runner, project):
    import sys

    (project / "clean.py").write_text("import torch\n")
    (project / "fmt.py").write_text(
        "import sys\nfor name in sys.argv[1:]:\n    open(name, 'a').write('# formatted\\n')\n"
    )
    command = f'"{sys.executable}" fmt.py'
    result = runner.invoke(main, ["apply", "--format-with", command, "train.py", "clean.py"])
    assert result.exit_code == 0, result.output
    assert (project / "train.py").read_text().endswith("# formatted\n")
    assert (project / "clean.py").read_text() == "import torch\n"  # not written by devfix: not formatted
    (project / "train.py").write_text(HARD_CODED)
    (project / "fail.py").write_text("import sys\nprint('cannot format', file=sys.stderr)\nsys.exit(3)\n")
    failed = runner.invoke(main, ["apply", "--format-with", f'"{sys.executable}" fail.py', "train.py"])
    assert failed.exit_code == 2
    assert "train.py: error: --format-with" in failed.stderr and "failed (exit 3): cannot format" in failed.stderr
    (project / "train.py").write_text(HARD_CODED)
    missing = runner.invoke(main, ["apply", "--format-with", "no-such-formatter-xyz", "train.py"])
    assert missing.exit_code == 2 and "cannot run 'no-such-formatter-xyz'" in missing.stderr


def test_each_command_offers_only_the_options_it_uses(runner):
    for command in ("add-ignore", "show-settings", "apply", "check"):
        assert runner.invoke(main, [command, "--help"]).exit_code == 0
    add_ignore = runner.invoke(main, ["add-ignore", "--help"]).output
    assert "--select" in add_ignore and "--force-exclude" in add_ignore
    assert "--output-format" not in add_ignore and "--exit-zero" not in add_ignore
    assert "--summary-md" in runner.invoke(main, ["apply", "--help"]).output
    assert "--summary-md" not in runner.invoke(main, ["check", "--help"]).output

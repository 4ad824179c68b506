"""The cache of results: the same output with it, without it, cold or warm; invalidated by
what a result depends on."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from devfix.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def _run(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def folder(tmp_path, monkeypatch):
    for name in ("projects", "notebooks", "DEV002"):
        shutil.copytree(FIXTURES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", [["check", "--output-format", "json"], ["apply", "--diff"]])
def test_results_are_the_same_with_and_without_the_cache(folder, command):
    uncached = _run(*command, "--no-cache", ".")
    assert not (folder / ".devfix_cache").exists()
    assert _run(*command, ".") == uncached  # cold: fills the cache
    assert (folder / ".devfix_cache" / ".gitignore").read_text().strip().endswith("*")
    assert _run(*command, ".") == uncached  # warm: read from it
    assert _run(*command, "--jobs", "2", ".") == uncached
    # one group changes: the others' results come from the cache, the GPU-only script's
    # group (analysed once more by the last step) among them
    changed = sorted((folder / "projects" / "config_module_device").glob("*.py"))[0]
    changed.write_text(changed.read_text() + "\n# edited\n")
    assert _run(*command, ".") == _run(*command, "--no-cache", ".")


MODEL_MOVES_ITSELF = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)
""")

TRAIN = textwrap.dedent("""\
    import torch
    from model import Net

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = Net()
    out = net(torch.ones(1, 4).to(device))
    print(out)
""")


def test_a_changed_dependency_invalidates_the_importer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL_MOVES_ITSELF)
    (tmp_path / "train.py").write_text(TRAIN)
    first = _run("check", ".")
    assert "DEV003" in first[1]  # `Net()` holds weights and is never moved
    # the model now moves its inputs to its own device: nothing meets on two devices
    (tmp_path / "model.py").write_text(
        MODEL_MOVES_ITSELF.replace("return self.fc(x)", "return self.fc(x.to(self.fc.weight.device))")
    )
    second = _run("check", ".")
    assert second == _run("check", "--no-cache", ".")
    assert second != first


def test_a_file_outside_the_group_that_changes_the_text_scans_invalidates(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    helper = "import torch\n\n\ndef helper():\n    return torch.zeros(3).cuda()\n"
    (tmp_path / "tools.py").write_text(helper)
    (tmp_path / "other.py").write_text("print('nothing here')\n")
    first = _run("check", ".")
    assert first == _run("check", "--no-cache", ".")
    # another script, which does not import it, now names it: `helper` may run (project.unreferenced_functions)
    (tmp_path / "other.py").write_text("COMMANDS = ['helper']\n")
    second = _run("check", ".")
    assert second == _run("check", "--no-cache", ".")
    assert second != first


def test_another_configuration_is_another_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        TRAIN.replace("from model import Net", "Net = torch.nn.Linear").replace("Net()", "Net(4, 2)")
    )
    everything = _run("check", ".")
    assert "DEV003" in everything[1]
    assert "DEV003" not in _run("check", "--ignore", "DEV003", ".")[1]
    assert _run("check", ".") == everything


def test_an_unreadable_cache_is_ignored(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(
        TRAIN.replace("from model import Net", "Net = torch.nn.Linear").replace("Net()", "Net(4, 2)")
    )
    expected = _run("check", "--no-cache", ".")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "groups.json").write_text("{not json")
    assert _run("check", "--cache-dir", "cache", ".") == expected
    assert _run("check", "--cache-dir", "cache", ".") == expected


def test_a_re_run_the_cache_answers_imports_neither_the_parser_nor_the_analysis(tmp_path):
    """What makes a cached re-run cheap: its process never imports LibCST, the engine, the
    analysis behind FileFacts or a rule module (devfix/runner.py)."""
    shutil.copytree(FIXTURES / "projects", tmp_path / "projects")
    fill = subprocess.run([sys.executable, "-m", "devfix", "check", "."], cwd=tmp_path, capture_output=True, text=True)
    probe = (
        "import sys\n"
        "from devfix.cli import main\n"
        "try:\n    main(['check', '.'])\nexcept SystemExit as done:\n    code = done.code\n"
        "loaded = [m for m in sys.modules if m.startswith(('libcst', 'devfix.engine', 'devfix.analysis.facts',"
        " 'devfix.rules.dev'))]\n"
        "print('EXIT', code, 'LOADED', sorted(loaded), file=sys.stderr)\n"
    )
    again = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert fill.returncode == 1 and again.stdout == fill.stdout
    assert f"EXIT {fill.returncode} LOADED []" in again.stderr

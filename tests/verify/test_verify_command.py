"""The click command and the torch-free import guarantee."""

import os
import subprocess
import sys
import textwrap

from click.testing import CliRunner
from verify_helpers import ROOT, SCRIPTS


def _py(code):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )


def test_import_command_does_not_import_torch():
    proc = _py("""
        import sys
        import devfix.verify.command, devfix.verify
        assert "torch" not in sys.modules, sorted(m for m in sys.modules if m.startswith("torch"))
        print("clean")
    """)
    assert proc.returncode == 0 and "clean" in proc.stdout, proc.stderr


def test_torch_missing_message():
    proc = _py(f"""
        import sys, runpy
        sys.modules["torch"] = None  # import torch -> ImportError
        sys.argv = ["devfix verify", {os.path.join(SCRIPTS, "clean_exit.py")!r}]
        runpy.run_module("devfix.verify", run_name="__main__")
    """)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "devfix verify needs PyTorch: pip install 'devfix[verify]'"
    assert "Traceback" not in proc.stderr


def test_click_command_options_and_script_args():
    from devfix.verify.command import verify_command

    assert verify_command.context_settings["allow_interspersed_args"] is False
    names = {p.name for p in verify_command.params}
    assert {"as_json", "cpu_only_load", "devices", "module", "script", "args"} <= names
    # runs in-process here, so only a usage error (no torch patching happens)
    res = CliRunner().invoke(verify_command, ["missing_script.py", "--json", "x"])
    assert res.exit_code == 2
    assert CliRunner().invoke(verify_command, ["--devices", "0", "x.py"]).exit_code == 2
    res = CliRunner().invoke(verify_command, ["--json", "-m", "no_such_pkg.train", "--epochs", "1"])
    assert res.exit_code == 2 and "no module named 'no_such_pkg'" in res.output

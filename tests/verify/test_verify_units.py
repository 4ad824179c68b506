"""Unit tests of verify's pieces that need no script run."""

import inspect

from devfix.verify import report


def test_rule_names_and_hints_come_from_the_rule_classes():
    from devfix.rules import BY_CODE

    hinted = [code for code, rule in BY_CODE.items() if rule.verify_hint]
    assert hinted == [f"DEV{n:03}" for n in range(3, 13)]
    for code in hinted:
        assert report.rule_name(code) == BY_CODE[code].name
        assert report.rule_hint(code) == BY_CODE[code].verify_hint
    source = inspect.getsource(report)
    assert not any(f'"{rule.name}"' in source for rule in BY_CODE.values()), "a copied rule name"
    assert not any(rule.verify_hint in source for rule in BY_CODE.values() if rule.verify_hint), "a copied hint"
    res = report._with_rule(report.Result("device-error", 1), "DEV012")
    assert (res.rule_name, res.hint) == (BY_CODE["DEV012"].name, BY_CODE["DEV012"].verify_hint)
    assert report.rule_hint("DEV999") == report.rule_name("DEV999") == ""


def test_simulated_devices_text():
    assert report.simulated(1) == "simulated cuda:0"
    assert report.simulated(2) == "simulated cuda:0 and cuda:1"
    assert report.simulated(4) == "simulated cuda:0 to cuda:3"


# ---------------------------------------------------------------------------
# what `devfix verify TARGET` runs (devfix.verify.project, no torch)
# ---------------------------------------------------------------------------
import os  # noqa: E402

import pytest  # noqa: E402

from devfix.verify import project  # noqa: E402


def _write(folder, name, text="print('hi')\n"):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_folder_entry_by_name(tmp_path):
    entry = _write(tmp_path, "train.py")
    _write(tmp_path, "models.py", "if __name__ == '__main__':\n    pass\n")
    found = project.resolve(str(tmp_path))
    assert (found.path, found.module, found.root) == (entry, None, str(tmp_path))
    assert found.sys_path == [str(tmp_path)]


def test_folder_entry_by_main_guard(tmp_path):
    _write(tmp_path, "models.py")
    entry = _write(tmp_path, "run_experiment.py", 'import sys\n\nif __name__ == "__main__":\n    sys.exit(0)\n')
    assert project.resolve(str(tmp_path)).path == entry


def test_folder_dunder_main(tmp_path):
    entry = _write(tmp_path, "__main__.py")
    assert project.resolve(str(tmp_path)).path == entry


@pytest.mark.parametrize(
    "names,listed",
    [
        (["train.py", "main.py"], "(train.py, main.py)"),
        (["a.py", "b.py"], "(a.py, b.py)"),
    ],
)
def test_folder_ambiguous_entry_is_a_usage_error(tmp_path, names, listed):
    for name in names:
        _write(tmp_path, name, "if __name__ == '__main__':\n    pass\n")
    with pytest.raises(project.UsageError) as err:
        project.resolve(str(tmp_path))
    assert listed in str(err.value) and "pass the one to run" in str(err.value)


def test_folder_without_entry_is_a_usage_error(tmp_path):
    _write(tmp_path, "models.py")
    with pytest.raises(project.UsageError, match="no entry script"):
        project.resolve(str(tmp_path))


def test_script_root_is_the_current_folder_when_run_from_above(tmp_path):
    script = _write(tmp_path, "tools/train.py")
    inside = project.resolve(script, cwd=str(tmp_path))
    assert inside.root == str(tmp_path) and inside.sys_path == [os.path.dirname(script)]
    (tmp_path / "other").mkdir()
    elsewhere = project.resolve(script, cwd=str(tmp_path / "other"))
    assert elsewhere.root == os.path.dirname(script)


def test_module_entry(tmp_path):
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/train.py")
    found = project.resolve(None, "pkg.train", cwd=str(tmp_path))
    assert (found.path, found.module, found.root, found.sys_path) == (None, "pkg.train", str(tmp_path), [str(tmp_path)])
    with pytest.raises(project.UsageError, match="no module named 'nopkg'"):
        project.resolve(None, "nopkg.train", cwd=str(tmp_path))
    with pytest.raises(project.UsageError, match="no such script"):
        project.resolve(str(tmp_path / "missing.py"))

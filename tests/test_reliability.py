"""Issue 9: bad input is reported and skipped, nothing is lost, writes are safe.

Every test runs the real command line (click's CliRunner) on files in a temporary folder,
except the exact round-trip tests, which check the engine's bytes directly. The table in
docs/reliability.md names the test behind each row.
"""

from __future__ import annotations

import stat
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

import devfix.writer
from devfix.cli import MAX_FILE_BYTES, main
from devfix.config import Config
from devfix.engine import process_source
from devfix.parsing import MAX_NESTING
from devfix.rules import BY_CODE

BUGGY = "import torch\nfrom torch import nn\n\nmodel = nn.Linear(2, 2).cuda()\n"
FIXED = (
    "import torch\nfrom torch import nn\n\n"
    'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
    "model = nn.Linear(2, 2).to(device)\n"
)
CLEAN = "import torch\n\nx = torch.zeros(2)\nprint(x.sum())\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A temporary project folder that is also the working directory (short paths in output)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def error_lines(result) -> list:
    return [line for line in result.stderr.splitlines() if ": error: " in line]


def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# -- per-file isolation ---------------------------------------------------------------------

BAD_INPUTS = {
    "python2": (b"import torch\nprint 'loss', loss\n", "Missing parentheses in call to 'print'"),
    "syntax_error": (b"import torch\ndef train(model:\n    pass\n", "cannot parse"),
    "jinja_template": (b"import torch\n{% for layer in layers %}\nx = {{ layer }}\n{% endfor %}\n", "cannot parse"),
    # Python reads a tab after spaces at a consistent width; LibCST's tokenizer does not
    "tab_after_spaces": (
        b"import torch\nfor i in range(2):\n        with torch.no_grad():\n    \t    x = torch.ones(2).cuda()\n",
        "LibCST rejects indentation that mixes tabs and spaces; left unchanged",
    ),
    "not_utf8": ("import torch\n# r\u00e9seau de neurones\n".encode("latin-1"), "cannot parse: UnicodeDecodeError"),
    "unknown_coding": (b"# -*- coding: klingon -*-\nimport torch\n", "unknown encoding: klingon"),
    "binary": (b"torch\x00\x01\x02\xff\xfe", "skipped: binary file"),
    "deep_parentheses": (
        b"import torch\nx = " + b"(" * 3000 + b"1" + b")" * 3000 + b"\n",
        "too many nested parentheses",
    ),
    "long_chain": (b"import torch\nx = " + b" + ".join([b"a"] * 8000) + b"\n", f"over {MAX_NESTING} levels"),
    # flat for `ast`, a chain for LibCST, whose native parser crashed the whole run on it
    "long_boolean_chain": (b"import torch\nx = " + b" and ".join([b"a"] * 8000) + b"\n", f"over {MAX_NESTING} levels"),
    "deep_indentation": (
        b"import torch\n" + b"".join(b" " * i + b"if x:\n" for i in range(120)) + b" " * 120 + b"pass\n",
        "too many levels of indentation",
    ),
    "tabs_and_spaces": (b"import torch\nif x:\n\tif y:\n        pass\n", "inconsistent use of tabs and spaces"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_reported_skipped_and_the_run_goes_on(project, name):
    data, message = BAD_INPUTS[name]
    bad = write(project, f"bad_{name}.py", data)
    good = write(project, "good.py", BUGGY)
    result = run("apply", ".")
    assert result.exit_code == 2
    errors = error_lines(result)
    assert len(errors) == 1 and errors[0].startswith(f"bad_{name}.py: error: ") and message in errors[0]
    assert bad.read_bytes() == data  # untouched
    assert good.read_text() == FIXED  # the run went on


def test_blank_lines_libcst_drops_at_the_end_of_a_file_are_kept(project):
    """LibCST shrinks indented blank lines after a file's last statement (SincNet's
    compute_d_vector.py ends so): the file is fixed, and its tail is written back as it was."""
    tail = b"\n         \n    \n    \n\n\n\n"
    script = write(project, "tail.py", BUGGY.encode() + tail)
    result = run("apply", "tail.py")
    assert result.exit_code == 0 and not error_lines(result)
    assert script.read_bytes() == FIXED.encode() + tail
    assert run("apply", "tail.py").exit_code == 0 and script.read_bytes() == FIXED.encode() + tail


def test_old_mac_line_endings_are_kept(project):
    """A file with old Mac `\\r` line endings, which LibCST reads without its final newline: the
    edited statements are spliced into the file's own text, every line still ends in `\\r`."""
    script = write(project, "mac.py", b"import torch\rx = torch.zeros(1).cuda()\ry = x + 1\r")
    assert run("apply", "mac.py").exit_code == 0
    fixed = script.read_bytes()
    assert b"\n" not in fixed and fixed.endswith(b"x = torch.zeros(1).to(device)\ry = x + 1\r")
    assert run("apply", "mac.py").exit_code == 0 and script.read_bytes() == fixed


def test_comments_libcst_drops_at_the_end_of_a_file_without_a_final_newline_are_kept(project):
    """LibCST drops comment lines indented deeper than the module after a file's last
    statement (an InfoGAN course script ends with commented-out code, then a comment with no
    final newline): the edited statements are spliced into the file's own text, which keeps
    them, and `check` and `apply` report the same findings."""
    tail = b"print(x)\n        # vutils.save_image(fake,\n            # normalize=True)\n\n# python3 eval.py --cuda"
    source = b"import torch\nx = torch.zeros(1).cuda()\n" + tail
    script = write(project, "eval.py", source)
    checked = run("check", "eval.py")
    result = run("apply", "eval.py")
    assert result.exit_code == 0 and not error_lines(result)
    assert checked.exit_code == 1 and not error_lines(checked)
    fixed = script.read_bytes()
    assert fixed.endswith(b"x = torch.zeros(1).to(device)\n" + tail)
    assert run("apply", "eval.py").exit_code == 0 and script.read_bytes() == fixed


def test_bad_file_in_check_mode_exits_2_and_names_the_file(project):
    write(project, "bad.py", b"import torch\nprint 'x'\n")
    result = run("check", "bad.py")
    assert result.exit_code == 2
    assert error_lines(result) == [
        "bad.py: error: cannot parse: Missing parentheses in call to 'print'. Did you mean print(...)? (line 2)"
    ]


def test_empty_file_is_clean(project):
    write(project, "empty.py", b"")
    result = run("apply", "empty.py")
    assert result.exit_code == 0 and not error_lines(result)
    assert (project / "empty.py").read_bytes() == b""
    assert process_source(b"", Config(), fix=True).new == b""


def test_file_without_torch_is_never_parsed(project):
    """The `torch` pre-filter: a file whose bytes never spell `torch` is not parsed at all.

    No rule can fire there, so a broken file of that kind (Python 2, binary, UTF-16 — which
    Python cannot run either) is passed over silently and byte-identical, not an error.
    """
    files = {"legacy.py": b"print 'hello'\n\x00", "utf16.py": "import torch\n".encode("utf-16")}
    for name, data in files.items():
        write(project, name, data)
    assert run("apply", ".").exit_code == 0
    for name, data in files.items():
        assert (project / name).read_bytes() == data


def test_huge_file_is_skipped(project):
    big = write(project, "big.py", b"import torch\n" + b"# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    result = run("apply", ".")
    assert result.exit_code == 2
    assert error_lines(result) == ["big.py: error: skipped: larger than 10 MiB"]
    assert big.stat().st_size > MAX_FILE_BYTES


def test_unreadable_file_is_reported(project):
    path = write(project, "secret.py", BUGGY)
    write(project, "good.py", BUGGY)
    path.chmod(0)
    try:
        try:
            path.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip("permissions are not enforced for this user (root)")
        result = run("apply", ".")
    finally:
        path.chmod(0o644)
    assert result.exit_code == 2
    assert error_lines(result) == ["secret.py: error: cannot read: Permission denied"]
    assert path.read_text() == BUGGY
    assert (project / "good.py").read_text() == FIXED


def test_rule_that_raises_names_rule_and_file_and_keeps_file(project, monkeypatch):
    def broken(self, ctx):
        raise ValueError("simulated bug\nsecond line")
        yield  # pragma: no cover - makes this a generator like the real check

    monkeypatch.setattr(BY_CODE["DEV003"], "check", broken)
    path = write(project, "train.py", BUGGY)
    other = write(project, "sub/other.py", BUGGY)
    result = run("apply", ".")
    assert result.exit_code == 2
    assert sorted(error_lines(result)) == [
        "sub/other.py: error: internal error in rule DEV003 model-placement: ValueError: simulated bug; file left unchanged",
        "train.py: error: internal error in rule DEV003 model-placement: ValueError: simulated bug; file left unchanged",
    ]
    assert "Traceback" not in result.stderr
    assert path.read_text() == BUGGY and other.read_text() == BUGGY
    shown = run("check", "--show-traceback", "train.py")
    assert "Traceback (most recent call last)" in shown.stderr and "simulated bug" in shown.stderr


def test_analysis_crash_is_isolated_too(project, monkeypatch):
    """A bug outside any rule (here: the analysis) is also one file's error, not the run's."""
    import devfix.engine

    def broken(*args, **kwargs):
        raise KeyError("facts")

    monkeypatch.setattr(devfix.engine, "FileFacts", broken)
    write(project, "train.py", BUGGY)
    result = run("apply", "--show-traceback", ".")
    assert result.exit_code == 2
    assert error_lines(result) == ["train.py: error: internal error: KeyError: 'facts'; file left unchanged"]
    assert "Traceback (most recent call last)" in result.stderr


def test_fix_that_does_not_parse_is_dropped(project, monkeypatch):
    from devfix.edits import Replace

    def bad_fix(self, ctx):
        for call in ctx.facts.data.calls:
            yield self.finding(call, "bad", [Replace(call, cst.Name("if"))])  # `model = if`

    monkeypatch.setattr(BY_CODE["DEV002"], "check", bad_fix)
    path = write(project, "train.py", BUGGY)
    result = run("apply", ".")
    assert result.exit_code == 1  # the broken fixes are reported, the file keeps the good ones
    assert "produced code that does not parse" in result.output
    fixed = path.read_text()
    assert "= if" not in fixed
    compile(fixed, "train.py", "exec")


# -- exit codes --------------------------------------------------------------------------------


def test_exit_codes(project):
    write(project, "clean.py", CLEAN)
    assert run("check", "clean.py").exit_code == 0
    assert run("apply", "clean.py").exit_code == 0
    write(project, "buggy.py", BUGGY)
    assert run("check", "buggy.py").exit_code == 1
    assert run("apply", "--diff", "buggy.py").exit_code == 1
    assert run("apply", "buggy.py").exit_code == 0  # everything found was fixed
    assert run("apply", "buggy.py").exit_code == 0  # and nothing is left
    assert run("check", "missing.py").exit_code == 2  # usage error


# -- safe writes -------------------------------------------------------------------------------


def _files(folder):
    """The folder's entries, less devfix's cache (created in the working directory, as ruff's)."""
    return sorted(p.name for p in folder.iterdir() if p.name != ".devfix_cache")


def test_write_keeps_permission_bits_and_leaves_no_temporary_file(project):
    path = write(project, "run.py", BUGGY)
    path.chmod(0o751)
    assert run("apply", "run.py").exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == FIXED
    assert _files(project) == ["run.py"]


def test_file_changed_between_read_and_write_is_not_overwritten(project, monkeypatch):
    path = write(project, "train.py", BUGGY)
    import devfix.engine

    real = devfix.engine.process_source

    def edit_meanwhile(*args, **kwargs):
        result = real(*args, **kwargs)
        path.write_text(BUGGY + "# edited by someone else\n")
        return result

    monkeypatch.setattr(devfix.engine, "process_source", edit_meanwhile)
    result = run("apply", "train.py")
    assert result.exit_code == 2
    assert error_lines(result) == [
        "train.py: error: file changed on disk while devfix was working on it; not overwritten"
    ]
    assert path.read_text() == BUGGY + "# edited by someone else\n"


def test_failed_write_leaves_original_and_no_temporary(project, monkeypatch):
    path = write(project, "train.py", BUGGY)

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(devfix.writer.os, "replace", failing_replace)
    result = run("apply", "train.py")
    assert result.exit_code == 2
    assert error_lines(result) == ["train.py: error: cannot write: No space left on device"]
    assert path.read_text() == BUGGY
    assert _files(project) == ["train.py"]


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    return write(folder, "victim.py", BUGGY)


def test_symlink_out_of_the_tree_is_never_written_through(tmp_path, monkeypatch, outside):
    tree = tmp_path / "proj"
    tree.mkdir()
    monkeypatch.chdir(tree)
    (tree / "link.py").symlink_to(outside)
    (tree / "sub").symlink_to(outside.parent, target_is_directory=True)
    # Walking the tree: neither the file link nor the folder link is followed.
    result = run("apply", ".")
    assert result.exit_code == 0 and "link.py" not in result.output
    # Named explicitly: read and reported, but not written.
    result = run("apply", "link.py")
    assert result.exit_code == 2
    assert error_lines(result) == [
        f"link.py: error: symbolic link to {outside.resolve()}, outside the tree being fixed; not written through"
    ]
    assert outside.read_text() == BUGGY
    assert (tree / "link.py").is_symlink()


def test_symlink_inside_the_tree_is_written_through_and_stays_a_link(project):
    real = write(project, "real/train.py", BUGGY)
    link = project / "train_link.py"
    link.symlink_to(Path("real") / "train.py")
    result = run("apply", "train_link.py")
    assert result.exit_code == 0
    assert link.is_symlink() and real.read_text() == FIXED


def test_symlinked_file_is_not_visited_twice_in_a_walk(project):
    write(project, "train.py", BUGGY)
    (project / "alias.py").symlink_to(project / "train.py")
    result = run("check", ".")
    assert result.exit_code == 1
    assert "alias.py" not in result.output


# -- exact round trip --------------------------------------------------------------------------

UNTOUCHED = {
    "lf": b"import torch\n\nx = torch.zeros(2)\n",
    "crlf": b"import torch\r\n\r\nx = torch.zeros(2)\r\n",
    "mixed": b"import torch\r\nx = torch.zeros(2)\ny = x + 1\r\n",
    "bom": b"\xef\xbb\xbfimport torch\nx = torch.zeros(2)\n",
    "bom_crlf": b"\xef\xbb\xbfimport torch\r\nx = torch.zeros(2)\r\n",
    "latin1": "# -*- coding: latin-1 -*-\nimport torch\n# r\u00e9seau: \u00e9t\u00e9\nx = torch.zeros(2)  # \u00b5\n".encode(
        "latin-1"
    ),
    "tabs": b"import torch\n\ndef f(x):\n\tif x:\n\t\treturn torch.zeros(2)\n",
    "form_feed": b"import torch\n\x0c\ndef f():\n    return torch.zeros(2)\n\x0c\n",
    "no_final_newline": b"import torch\nx = torch.zeros(2)",
    "trailing_whitespace": b"import torch   \nx = torch.zeros(2) \\\n    + 1\t\n\n\n",
    "only_comments": b"# torch\n",
}


@pytest.mark.parametrize("name", sorted(UNTOUCHED))
def test_untouched_file_is_byte_identical(project, name):
    data = UNTOUCHED[name]
    path = write(project, "clean.py", data)
    result = run("apply", "clean.py")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == data
    assert process_source(data, Config(), fix=True).new == data


def _buggy(newline: bytes, indent: bytes = b"    ") -> bytes:
    lines = [
        b"import torch",
        b"from torch import nn",
        b"",
        b"",
        b"def main():",
        indent + b"model = nn.Linear(2, 2).cuda()",
        indent + b"return model",
    ]
    return newline.join(lines) + newline


def _expected(newline: bytes, indent: bytes = b"    ") -> bytes:
    declaration = b'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'
    lines = [
        b"import torch",
        b"from torch import nn",
        b"",
        b"",
        b"def main():",
        indent + declaration,
        indent + b"model = nn.Linear(2, 2).to(device)",
        indent + b"return model",
    ]
    return newline.join(lines) + newline


FIXED_CASES = {
    "lf": (_buggy(b"\n"), _expected(b"\n")),
    "crlf": (_buggy(b"\r\n"), _expected(b"\r\n")),
    "tabs": (_buggy(b"\n", b"\t"), _expected(b"\n", b"\t")),
    "tabs_crlf": (_buggy(b"\r\n", b"\t"), _expected(b"\r\n", b"\t")),
    "two_space_indent": (_buggy(b"\n", b"  "), _expected(b"\n", b"  ")),
    "bom": (b"\xef\xbb\xbf" + _buggy(b"\n"), b"\xef\xbb\xbf" + _expected(b"\n")),
    "bom_crlf": (b"\xef\xbb\xbf" + _buggy(b"\r\n"), b"\xef\xbb\xbf" + _expected(b"\r\n")),
    "no_final_newline": (_buggy(b"\n")[:-1], _expected(b"\n")[:-1]),
    "crlf_no_final_newline": (_buggy(b"\r\n")[:-2], _expected(b"\r\n")[:-2]),
    "latin1": (
        b"# -*- coding: latin-1 -*-\n# r\xe9seau\n" + _buggy(b"\n") + b"# \xe9t\xe9 \xb5\n",
        b"# -*- coding: latin-1 -*-\n# r\xe9seau\n" + _expected(b"\n") + b"# \xe9t\xe9 \xb5\n",
    ),
    "form_feed": (
        _buggy(b"\n").replace(b"\n\n\ndef", b"\n\x0c\n\ndef") + b"\x0c\n",
        _expected(b"\n").replace(b"\n\n\ndef", b"\n\x0c\n\ndef") + b"\x0c\n",
    ),
    # Mixed endings: each untouched line keeps its own ending; new lines use the file's
    # first one (LibCST's `default_newline`), here CRLF.
    "mixed": (
        b"import torch\r\nfrom torch import nn\n\n\ndef main():\r\n    model = nn.Linear(2, 2).cuda()\n    return model\r\n",
        b'import torch\r\nfrom torch import nn\n\n\ndef main():\r\n    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\r\n'
        b"    model = nn.Linear(2, 2).to(device)\n    return model\r\n",
    ),
}


@pytest.mark.parametrize("name", sorted(FIXED_CASES))
def test_fixed_file_changes_only_the_edit_in_the_files_own_style(project, name):
    before, after = FIXED_CASES[name]
    assert process_source(before, Config(), fix=True).new == after
    path = write(project, "train.py", before)
    assert run("apply", "train.py").exit_code == 0
    assert path.read_bytes() == after
    assert run("apply", "train.py").exit_code == 0  # idempotent
    assert path.read_bytes() == after


def test_module_level_declaration_in_crlf_file(project):
    before = BUGGY.replace("\n", "\r\n").encode()
    after = FIXED.replace("\n", "\r\n").encode()
    assert process_source(before, Config(), fix=True).new == after


def test_warnings_about_the_users_code_are_not_printed():
    """`"\\d"` makes Python warn (SyntaxWarning from 3.12); that is the user's business."""
    import warnings

    source = b'import torch\nx = "\\d"\ndevice = torch.device("cuda")\ny = torch.ones(1).to(device)\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = process_source(source, Config(), fix=True)
    assert result.error is None and result.changed
    assert caught == []

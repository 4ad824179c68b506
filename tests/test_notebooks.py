"""Jupyter notebooks (issue 15): each folder of `tests/fixtures/notebooks/` is one run, its
notebooks and `.py` files analysed together as `devfix apply FOLDER` does.

Checked for every case: what `devfix apply --diff` prints (the per-cell diff and the findings,
one snapshot a reviewer reads), that `check` reports the same, that a second run changes
nothing, that every byte outside the changed cells' sources is kept, that the fixed notebook
is still a valid notebook whose cells all parse, and that its code cells pass `devfix verify`
while the input's fail. Folders named `ok_*` are correct: nothing reported, every byte kept.
`unreadable/` holds files devfix must report and leave alone (tested by name below).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from devfix import notebooks
from devfix.cli import main
from devfix.config import Config
from devfix.report import cell_error_lines, text_lines, unified_diff
from devfix.results import FileResult
from devfix.runner import process_project

FIXTURES = Path(__file__).parent / "fixtures" / "notebooks"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "unreadable")


def _run(root: Path, fix: bool = True) -> list[FileResult]:
    """The folder's files as one run, with paths relative to it (run from inside it)."""
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".py", ".ipynb"))
    reads = [FileResult(name, (root / name).read_bytes(), (root / name).read_bytes()) for name in names]
    return process_project(reads, Config(), fix=fix)


def _report(results: list[FileResult]) -> str:
    lines = []
    for result in results:
        assert result.error is None, f"{result.path}: {result.error}"
        lines.append(unified_diff(result))
        lines.extend(line + "\n" for line in cell_error_lines(result))
        lines.extend(line + "\n" for line in text_lines(result, dry_run=True))
    return "".join(lines)


def _write(root: Path, results: list[FileResult]) -> None:
    for result in results:
        (root / result.path).write_bytes(result.new)


@pytest.fixture
def case(request, tmp_path, monkeypatch):
    root = tmp_path / request.param
    shutil.copytree(FIXTURES / request.param, root)
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_notebook_fix(case, findings_snapshot):
    results = _run(case)
    report = _report(results)
    if case.name.startswith("ok_"):
        assert report == "", "a correct notebook must come out unchanged, with nothing reported"
        assert all(r.new == r.old for r in results)
    else:
        assert (
            any(r.changed and notebooks.is_notebook(r.path) for r in results) or case.name == "imports_sibling_module"
        )
        checked = _run(case, fix=False)  # `check` reports what `apply` fixes, at the same places
        key = lambda rs: [(r.path, d.cell, d.line, d.column, d.code, d.message) for r in rs for d in r.diagnostics]  # noqa: E731
        assert key(checked) == key(results)
    assert report == findings_snapshot


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_notebook_fix_is_idempotent(case):
    _write(case, _run(case))
    again = _run(case)
    assert not any(r.changed for r in again), "a second run must change nothing"
    assert not [d for r in again for d in r.diagnostics if d.status in ("fixed", "fixable")]


def _pairs(text: str):
    """The JSON with every object as its list of (key, value) pairs: key order counts."""
    return json.loads(text, object_pairs_hook=list)


def _without_sources(pairs):
    cells = dict(pairs)["cells"]
    return [(key, value) for key, value in pairs if key != "cells"], [
        [(k, v) for k, v in cell if k != "source"] for cell in cells
    ]


def _lines_inside_sources(text: str) -> set:
    """Line numbers of the text that hold a cell's source (nbformat's layout: one line per
    source line, between `"source": [` and its `]`)."""
    inside, found = False, set()
    for number, line in enumerate(text.splitlines()):
        if re.match(r'\s*"source": \[$', line):
            inside = True
        elif inside and re.match(r"\s*\],?$", line):
            inside = False
        elif inside or re.match(r'\s*"source": ".*",?$', line):
            found.add(number)
    return found


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_notebook_keeps_every_byte_outside_the_changed_sources(case):
    import difflib

    for result in _run(case):
        if not notebooks.is_notebook(result.path):
            continue
        old, new = result.old.decode(), result.new.decode()
        assert _without_sources(_pairs(old)) == _without_sources(_pairs(new)), "outputs, metadata, ids, key order"
        changed = {number for number, _, _ in result.cells}
        old_cells, new_cells = dict(_pairs(old))["cells"], dict(_pairs(new))["cells"]
        for number, (before, after) in enumerate(zip(old_cells, new_cells), 1):
            if number not in changed:
                assert before == after, f"cell {number} is not reported changed but differs"
        # what `git diff` shows: only lines of the sources, never the JSON around them
        inside_old, inside_new = _lines_inside_sources(old), _lines_inside_sources(new)
        matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            if tag != "equal":
                assert set(range(a1, a2)) <= inside_old and set(range(b1, b2)) <= inside_new, (
                    old.splitlines()[a1:a2],
                    new.splitlines()[b1:b2],
                )
        assert new.endswith("\n") == old.endswith("\n")


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_fixed_notebook_is_valid_and_its_cells_parse(case):
    for result in _run(case):
        if notebooks.is_notebook(result.path):
            before, after = notebooks.read(result.old), notebooks.read(result.new)  # nbformat validates both
            assert after.unparsed() == before.unparsed() == []
            compile(after.program, result.path, "exec")
            magics = lambda nb: [(c.number, sorted(c.magics.values())) for c in nb.cells]  # noqa: E731
            assert magics(after) == magics(before), "cells edited by devfix keep their magics, byte for byte"


def _verify(script_runner, notebook: Path):
    """Without --cpu-only-load: a notebook that saves a checkpoint and loads it back in the same
    run (sequence_classifier.ipynb) loads it on the machine that wrote it, which is correct."""
    code, output = script_runner.run(["-m", "devfix.verify", "--json", notebook.name], cwd=notebook.parent)
    report = next((json.loads(line) for line in reversed(output.strip().splitlines()) if line.startswith("{")), {})
    return code, report, output


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_fixed_notebook_passes_verify_and_the_input_fails(case, script_runner):
    entries = sorted(case.glob("*.ipynb"))
    results = _run(case)
    if not case.name.startswith("ok_"):
        reported = {d.code for r in results for d in r.diagnostics}
        for entry in entries:
            code, report, output = _verify(script_runner, entry)
            assert code == 1 and report.get("verdict") == "device-error", output[-2000:]
            assert report.get("rule") in reported, report
            assert report.get("cell") or not report["file"].endswith(".ipynb"), (
                "a failure in a notebook is told by cell"
            )
    _write(case, results)
    for entry in entries:
        code, report, output = _verify(script_runner, entry)
        assert code == 0 and report.get("verdict") == "ok", output[-3000:]


# -- layouts: the file is written as it was written --------------------------------------------


def _notebook(sources, **dump) -> str:
    cells = [{"cell_type": "markdown", "id": "m0", "metadata": {}, "source": ["# Title \u00e9\n", "text"]}]
    for number, source in enumerate(sources):
        cells.append(
            {
                "cell_type": "code",
                "execution_count": number + 1,
                "id": f"c{number}",
                "metadata": {"tags": []},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": ["caf\u00e9\n"]}],
                "source": source.splitlines(True),
            }
        )
    document = {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, **dump)


BUGGY = ["import torch\nfrom torch import nn", "model = nn.Linear(4, 2).cuda()\nprint(model(torch.randn(3, 4).cuda()))"]
LAYOUTS = {
    "jupyter": ({"indent": 1, "sort_keys": True, "ensure_ascii": False}, "\n"),
    "indent-2": ({"indent": 2, "ensure_ascii": False}, "\n"),
    "indent-4-ascii": ({"indent": 4}, ""),
    "compact": ({"separators": (",", ":")}, ""),
    "spaced-one-line": ({}, "\n"),
}


def _strings_form(text: str) -> str:
    """The same notebook with each source stored as one string."""
    data = json.loads(text)
    for cell in data["cells"]:
        cell["source"] = "".join(cell["source"])
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _layouts():
    for name, (dump, end) in LAYOUTS.items():
        yield name, _notebook(BUGGY, **dump) + end, dump, end
    text = _notebook(BUGGY, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    yield "crlf", text.replace("\n", "\r\n"), None, None
    yield "strings", _strings_form(text), {"indent": 1, "sort_keys": True, "ensure_ascii": False}, "\n"


@pytest.mark.parametrize("name,text,dump,end", list(_layouts()), ids=[n for n, *_ in _layouts()])
def test_a_notebook_without_edits_round_trips_byte_for_byte(name, text, dump, end):
    notebook = notebooks.read(text.encode())
    assert notebook.write(notebook.program) == (text, [])


@pytest.mark.parametrize("name,text,dump,end", list(_layouts()), ids=[n for n, *_ in _layouts()])
def test_an_edited_notebook_keeps_its_layout(name, text, dump, end):
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=True)
    assert result.error is None and result.changed, result.error
    new = result.new.decode()
    assert [number for number, _, _ in result.cells] == [2, 3]
    sources = ["".join(c["source"]) for c in json.loads(new)["cells"]]
    assert "device = torch.device(" in sources[1] and "model = nn.Linear(4, 2).to(device)" in sources[2]
    assert sources[0] == "# Title \u00e9\ntext"
    if dump is not None:  # what that writer itself would write for the new content
        assert json.dumps(json.loads(new), **dump) + end == new
    else:
        assert "\n" not in new.replace("\r\n", "")
    assert isinstance(json.loads(new)["cells"][2]["source"], type(json.loads(text)["cells"][2]["source"]))


def test_unchanged_lines_of_an_edited_source_keep_their_json_text():
    text = _notebook(BUGGY, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    text = text.replace('"import torch\\n"', '"import \\u0074orch\\n"')  # an escape another writer chose
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=True)
    assert '"import \\u0074orch\\n"' in result.new.decode()


# -- IPython syntax --------------------------------------------------------------------------------

MAGICS = [
    "%matplotlib inline\n%load_ext autoreload\n!pip install --quiet \\\n    tqdm\nimport torch\nfrom torch import nn",
    "%%time\nmodel = nn.Linear(4, 2).cuda()\nfor step in range(2):\n    !echo step $step\n    out = model(torch.randn(3, 4))",
    "files = !ls\nmodel?\n??nn.Linear\nlosses = %time [1, 2]",
    "%%bash\necho model = nn.Linear(4, 2).cuda()",
    "print 'done'",
]


def test_magics_are_kept_byte_for_byte_and_a_cell_that_cannot_be_parsed_is_reported():
    text = _notebook(MAGICS, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=True)
    assert result.error is None and result.cell_errors == [
        (6, "cannot parse: Missing parentheses in call to 'print'. Did you mean print(...)? (line 1)")
    ]
    old_cells = ["".join(c["source"]) for c in json.loads(text)["cells"]]
    new_cells = ["".join(c["source"]) for c in json.loads(result.new)["cells"]]
    assert new_cells[2] == (
        "%%time\nmodel = nn.Linear(4, 2).to(device)\nfor step in range(2):\n    !echo step $step\n"
        "    out = model(torch.randn(3, 4, device=device))"
    )
    assert new_cells[1].startswith(MAGICS[0]) and "device = torch.device(" in new_cells[1]
    assert new_cells[3:] == old_cells[3:], "magics-only, %%bash and unparseable cells are left as they were"
    assert {(d.cell, d.line, d.code) for d in result.diagnostics} >= {(3, 2, "DEV002"), (3, 5, "DEV008")}


def test_a_cell_indented_as_a_whole_is_read_as_ipython_runs_it():
    # IPython strips the first line's indentation from every line before running a cell
    indented = (
        " import torch\n import torch.nn as nn\n \n model = nn.Linear(4, 2).cuda()\n print(model(torch.randn(3, 4)))"
    )
    text = _notebook([indented, "x = torch.ones(2, 4).cuda()\nprint(model(x))"], indent=1) + "\n"
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=True)
    assert result.error is None and result.cell_errors == []
    cells = ["".join(c["source"]) for c in json.loads(result.new)["cells"]]
    assert cells[1] == (
        " import torch\n import torch.nn as nn\n \n"
        ' device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
        " model = nn.Linear(4, 2).to(device)\n print(model(torch.randn(3, 4, device=device)))"
    )
    assert cells[2] == "x = torch.ones(2, 4).to(device)\nprint(model(x))"
    # positions are the cell's own: `.cuda()` of line 4 starts after the indentation
    assert (2, 4, 10, "DEV002") in {(d.cell, d.line, d.column, d.code) for d in result.diagnostics}
    (again,) = process_project([FileResult("nb.ipynb", result.new, result.new)], Config(), fix=True)
    assert again.new == result.new and not again.diagnostics


def test_edits_that_cross_a_cell_or_touch_a_magic_are_refused():
    notebook = notebooks.read((_notebook(MAGICS[:2], indent=1) + "\n").encode())
    program = notebook.program
    with pytest.raises(notebooks.NotebookError, match="cell boundary"):
        notebook.write(program.replace("# [devfix cell 3]\n", ""))
    with pytest.raises(notebooks.NotebookError, match="from one cell to another"):
        notebook.write(
            program.replace("from torch import nn\n# [devfix cell 3]\n", "# [devfix cell 3]\nfrom torch import nn\n")
        )
    with pytest.raises(notebooks.NotebookError, match="IPython syntax"):
        notebook.write(program.replace("pass  # [devfix magic 1]\n", "", 1))
    with pytest.raises(notebooks.NotebookError, match="IPython syntax"):
        notebook.write(program.replace("    pass  # [devfix magic 1]", "pass  # [devfix magic 1]"))


def test_a_move_taken_out_of_one_cell_and_made_in_another_keeps_the_cells_apart():
    """DEV003 removes `model.to(device)` from the top of cell 3 and moves the model where cell 2
    builds it; the comment under the removed line stays in cell 3."""
    sources = [
        "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        "model = nn.Linear(4, 2)\noptimizer = torch.optim.Adagrad(model.parameters())",
        "model.to(device)\n# now train\nfor i in range(2):\n    model(torch.randn(3, 4, device=device)).sum().backward()\n"
        "    optimizer.step()",
    ]
    text = _notebook(sources, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=True)
    assert result.error is None and [(d.cell, d.line, d.code) for d in result.diagnostics] == [(4, 1, "DEV003")]
    cells = ["".join(c["source"]) for c in json.loads(result.new)["cells"]]
    assert cells[2] == "model = nn.Linear(4, 2).to(device)\noptimizer = torch.optim.Adagrad(model.parameters())"
    assert cells[3].startswith("# now train\nfor i in range(2):")


def test_cells_after_a_runtime_restart_are_left_alone():
    """ParallelWaveGAN's conversion notebook runs `os._exit(00)` to restart its runtime; the
    cells after it run in a new session, without the names bound before it. A `device`
    declared in the first cell (after its imports) would be a NameError there: devfix leaves
    the cells after the restart alone."""
    sources = [
        "import os\nimport torch\nfrom torch import nn",
        "model = nn.Linear(4, 2)\nprint(model(torch.randn(3, 4)))",
        "# To enable eager mode, restart the runtime\nos._exit(00)",
        "import torch\nfrom torch import nn\nnet = nn.Linear(80, 2).to('cuda').eval()\n"
        "mel = torch.randn(1, 80).to('cuda')\nprint(net(mel))",
    ]
    text = _notebook(sources, indent=1) + "\n"
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=True)
    assert result.error is None and result.diagnostics == []
    assert result.new in (b"", text.encode())


def test_positions_map_to_cells():
    notebook = notebooks.read((_notebook(["import torch", "\nx = 1\ny = 2"], indent=1) + "\n").encode())
    line = notebook.program.splitlines().index("y = 2") + 1
    assert notebook.position(line) == (3, 3)


# -- the command line ------------------------------------------------------------------------------


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES, tmp_path / "nb")
    monkeypatch.chdir(tmp_path / "nb")
    return tmp_path / "nb"


def test_check_reads_the_notebook_and_reports_cells(folder):
    result = CliRunner().invoke(main, ["check", "cifar10_tutorial/cifar10_tutorial.ipynb"])
    assert result.exit_code == 1
    assert (
        "cifar10_tutorial/cifar10_tutorial.ipynb:cell 11:6:9: DEV004 [*] 'inputs', 'labels' from 'data'"
        in result.output
    )
    assert "Found 5 problems" in result.output
    items = json.loads(
        CliRunner().invoke(main, ["check", "--format", "json", "cifar10_tutorial/cifar10_tutorial.ipynb"]).output
    )
    assert {(item["cell"], item["line"], item["code"]) for item in items} >= {(11, 6, "DEV004"), (13, 11, "DEV009")}


def test_apply_writes_the_notebook_and_a_second_check_is_clean(folder):
    before = (folder / "cifar10_tutorial/cifar10_tutorial.ipynb").read_bytes()
    assert CliRunner().invoke(main, ["apply", "cifar10_tutorial"]).exit_code == 0
    assert (folder / "cifar10_tutorial/cifar10_tutorial.ipynb").read_bytes() != before
    again = CliRunner().invoke(main, ["check", "cifar10_tutorial"])
    assert again.exit_code == 0 and "No problems found (1 file checked)." in again.output


def test_the_folder_walk_finds_notebooks_and_honours_excludes(folder):
    found = CliRunner().invoke(main, ["check", "cifar10_tutorial", "ok_correct_device_handling"])
    assert "(2 files checked)" in found.output
    excluded = CliRunner().invoke(main, ["check", "--exclude", "*.ipynb", "cifar10_tutorial"])
    assert excluded.exit_code == 0 and "(0 files checked)" in excluded.output


@pytest.mark.parametrize(
    "name,message",
    [
        ("truncated.ipynb", "error: not a notebook: not valid JSON (Expecting"),
        ("not_a_notebook.ipynb", "error: not a notebook: JSON without a notebook's `nbformat` version"),
        ("nbformat3.ipynb", "error: not a notebook devfix reads: nbformat 3"),
    ],
)
def test_a_file_that_is_not_a_notebook_is_reported_and_left_untouched(folder, name, message):
    path = folder / "unreadable" / name
    before = path.read_bytes()
    for command in (["check"], ["apply"], ["apply", "--diff"]):
        result = CliRunner().invoke(main, [*command, str(path.relative_to(folder))])
        assert result.exit_code == 2 and message in result.output, result.output
        assert "No problems found (" not in result.output
    assert path.read_bytes() == before


def test_a_notebook_that_fails_the_schema_or_runs_another_language_is_reported():
    text = _notebook(BUGGY, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    broken = json.loads(text)
    del broken["cells"][1]["outputs"]
    r_kernel = json.loads(text)
    r_kernel["metadata"]["kernelspec"] = {"display_name": "R", "language": "R", "name": "ir"}
    for document, message in (
        (broken, "not a valid notebook: 'outputs' is a required property"),
        (r_kernel, "not a Python notebook (its kernel runs r)"),
    ):
        data = json.dumps(document, indent=1).encode()
        (result,) = process_project([FileResult("nb.ipynb", data, data)], Config(), fix=True)
        assert result.error == message and result.new == data and result.diagnostics == []


def test_a_cell_that_cannot_be_parsed_is_reported_and_the_others_are_fixed(folder):
    path = folder / "unreadable" / "python2_cell.ipynb"
    before = json.loads(path.read_text())
    result = CliRunner().invoke(main, ["apply", "unreadable/python2_cell.ipynb"])
    assert result.exit_code == 2
    assert "unreadable/python2_cell.ipynb:cell 2: error: cannot parse: Missing parentheses" in result.output
    after = json.loads(path.read_text())
    assert after["cells"][1] == before["cells"][1]
    assert "".join(after["cells"][2]["source"]).startswith("model = nn.Linear(4, 2).to(device)")


def test_verify_refuses_a_notebook_with_a_cell_it_cannot_parse(folder):
    from devfix.verify import run_script

    outcome = run_script(folder / "unreadable" / "python2_cell.ipynb")
    assert outcome.verdict == "usage-error" and outcome.exit_code == 2
    assert "cell 2: cannot parse" in outcome.report["message"]


def test_verify_compiles_each_cell_on_its_own_as_a_kernel_does(tmp_path):
    """A `from __future__` import may open any cell, and it holds for the cells after it."""
    from devfix.verify import run_script

    sources = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')",
        "from __future__ import annotations\n%matplotlib inline\ndef scale(x: NotDefinedAnywhere) -> Tensor:\n    return x * 2",
        "def shift(x: AlsoUndefined):\n    return x + 1\nprint(shift(scale(torch.ones(2, device=device))))",
    ]
    path = tmp_path / "future.ipynb"
    path.write_text(_notebook(sources, indent=1) + "\n")
    outcome = run_script(path)
    assert outcome.verdict == "ok", outcome.stdout + outcome.stderr


def test_a_move_shown_as_a_cells_last_line_is_looked_at_not_discarded():
    """`m.to(device)` ending a tutorial's cell is IPython's output, shown on purpose (the tensor
    stays on the CPU for the NumPy-bridge cells after it): no DEV011. The same line in the
    middle of a cell moves nothing and is still reported."""
    sources = [
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nm = torch.ones(2, 2)",
        "m.to(device)",
        "m_np = m.numpy()\nm_np[0, 0] = -1\nm",
        "n = torch.ones(2)\nn.to(device)\nprint(n + torch.ones(2, device=device))",
    ]
    text = _notebook(sources, indent=1) + "\n"
    (result,) = process_project([FileResult("nb.ipynb", text.encode(), text.encode())], Config(), fix=False)
    assert result.error is None
    assert [(d.cell, d.line, d.code) for d in result.diagnostics] == [(5, 2, "DEV011")]


def test_a_notebook_whose_unreadable_cell_places_models_is_left_alone(folder):
    """DiscoGAN's notebook builds its models in a Python 2 cell and calls `.cuda()` on them
    there: that cell runs as before whatever devfix rewrites, so the `.cuda()` of the other
    cells is not rewritten either; the cell is reported."""
    path = folder / "unreadable" / "python2_cell_places_models.ipynb"
    before = path.read_bytes()
    result = CliRunner().invoke(main, ["apply", "unreadable/python2_cell_places_models.ipynb"])
    assert result.exit_code == 2 and path.read_bytes() == before
    assert "python2_cell_places_models.ipynb:cell 2: error: cannot parse" in result.output
    assert "DEV002" not in result.output


def test_a_python2_notebook_whose_loop_cell_calls_the_others_is_left_alone(folder):
    """EdGENetworks' notebook defines its training functions, with their `.cuda()`, in cells
    Python 3 reads, and calls them only from a cell with Python 2 prints, which devfix cannot
    read: what runs there is unknown to it, so the model's `.cuda()` of another cell is left
    as it is too. Nothing is reported but the cell."""
    path = folder / "unreadable" / "python2_loop_calls_the_readable_cells.ipynb"
    before = path.read_bytes()
    result = CliRunner().invoke(main, ["apply", "unreadable/python2_loop_calls_the_readable_cells.ipynb"])
    assert result.exit_code == 2 and path.read_bytes() == before
    assert (
        "python2_loop_calls_the_readable_cells.ipynb:cell 4: error: cannot parse: Missing parentheses" in result.output
    )
    assert "DEV00" not in result.output

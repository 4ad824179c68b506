"""The per-loop facts (devfix/analysis/loops.py) and the report-only cases of DEV004/DEV011."""

from __future__ import annotations

import libcst as cst

from devfix.analysis import FileFacts
from devfix.engine import fix_code

HEADER = """import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4, pin_memory=True)
"""


def facts_of(code: str) -> FileFacts:
    return FileFacts(cst.parse_module(code))


def test_loop_facts_sort_names_by_where_they_go():
    facts = facts_of(HEADER + "for x, y, ids in loader:\n    loss = criterion(model(x), y)\n    print(np.asarray(ids))\n")
    [batch] = facts.batch_loops
    assert batch.names == ("x", "y", "ids")
    assert batch.to_move == ("x", "y")
    assert batch.cpu_side == ("ids",)
    assert batch.needs_transfer
    assert facts.loops_needing_transfer == [batch]
    assert facts.loader_pins(batch.loader)


def test_moved_batches_need_no_transfer():
    facts = facts_of(HEADER + "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n    loss = criterion(model(x), y)\n")
    [batch] = facts.batch_loops
    assert batch.moved == ("x", "y") and not batch.needs_transfer
    assert facts.loops_needing_transfer == []


def test_a_dtype_cast_is_not_a_move():
    facts = facts_of(HEADER + "for x, y in loader:\n    x = x.to(torch.float32)\n    loss = criterion(model(x), y)\n")
    assert facts.batch_loops[0].to_move == ("x", "y")


def test_tensor_needed_on_device_and_by_numpy_is_reported_without_fix():
    code = HEADER + "for x, y in loader:\n    loss = criterion(model(x), y)\n    print(np.mean(y))\n"
    new, diagnostics = fix_code(code)
    assert new == code
    [finding] = [d for d in diagnostics if d.code == "DEV004"]
    assert finding.status == "no-fix" and "'y'" in finding.message


def test_model_from_elsewhere_without_device_is_reported_without_fix():
    code = (
        "import torch\nfrom mylib import load_model\n\nmodel = load_model()\nscale = torch.ones(1, device='cpu')\n"
        "for x in torch.utils.data.DataLoader(range(4)):\n    print(model(x) * scale)\n"
    )
    new, diagnostics = fix_code(code)
    assert new == code
    assert [d.status for d in diagnostics if d.code == "DEV004"] == ["no-fix"]


def test_a_program_that_places_nothing_is_left_alone():
    code = "import torch\nfrom mylib import load_model\n\nmodel = load_model()\nfor x in torch.utils.data.DataLoader(range(4)):\n    print(model(x))\n"
    assert fix_code(code) == (code, [])


def test_helper_uses_module_device_planned_for_the_model():
    code = (
        "import torch\nfrom torch import nn\n\nmodel = nn.Linear(2, 2).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n\n\n"
        "def run(loader):\n    for x, y in loader:\n        print(model(x))\n"
    )
    new, _ = fix_code(code)
    assert "        x = x.to(device)\n" in new
    assert new.count("device = ") == 1


def test_discarded_to_on_a_global_inside_a_function_is_left_alone():
    code = HEADER + "x = torch.ones(4)\n\n\ndef f():\n    x.to(device)\n    return model(x)\n"
    new, diagnostics = fix_code(code)
    assert new == code
    assert [d for d in diagnostics if d.code == "DEV011"] == []


def test_next_over_iter_loader_is_a_batch_loop():
    facts = facts_of(HEADER + "it = iter(loader)\nfor step in range(2):\n    x, y = next(it)\n    loss = criterion(model(x), y)\n")
    [batch] = facts.batch_loops
    assert batch.after and batch.to_move == ("x", "y")

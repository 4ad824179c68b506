"""The per-loader placement plan (devfix/analysis/data.py), its report-only cases, the benchmark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import libcst as cst

from devfix.analysis.facts import FileFacts
from devfix.config import Config
from devfix.engine import fix_code

HEADER = """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 1).to(device)
X, y = torch.randn(8, 4), torch.randn(8, 1)
"""
LOOP = "for xb, yb in loader:\n    print(nn.functional.mse_loss(model(xb), yb))\n"
DEVICE = Config(dataset_placement="device")


def site_of(code: str, placement: str = "pinned"):
    [site] = FileFacts(cst.parse_module(code), dataset_placement=placement).loader_plans.values()
    return site


def test_plan_hoists_tensordataset_moves_under_pinning():
    site = site_of(
        HEADER
        + "loader = DataLoader(TensorDataset(X.to(device), y.to(device)), batch_size=4, pin_memory=True)\n"
        + LOOP
    )
    assert len(site.hoist) == 2 and not site.on_device_after and site.pins_after and not site.remove_pin


def test_plan_keeps_device_data_in_device_mode_and_unpins():
    site = site_of(
        HEADER
        + "loader = DataLoader(TensorDataset(X.to(device), y.to(device)), batch_size=4, pin_memory=True)\n"
        + LOOP,
        "device",
    )
    assert site.hoist == [] and site.on_device_after and site.remove_pin and not site.pins_after


def test_device_mode_with_workers_over_device_data_is_reported_without_fix():
    code = (
        HEADER + "loader = DataLoader(TensorDataset(X.to(device), y.to(device)), batch_size=4, num_workers=2)\n" + LOOP
    )
    new, diagnostics = fix_code(code, DEVICE)
    assert new == code
    assert [(d.code, d.status) for d in diagnostics] == [("DEV006", "no-fix")]


def test_loader_that_escapes_is_not_hoisted():
    code = (
        HEADER
        + "from mylib import fit\nloader = DataLoader(TensorDataset(X.to(device), y.to(device)), batch_size=4, pin_memory=True)\nfit(model, loader)\n"
    )
    new, diagnostics = fix_code(code)
    assert "X.to(device)" in new and "pin_memory" not in new  # the crash is fixed, the data stays
    assert {d.code for d in diagnostics if d.status == "no-fix"} == {"DEV006"}


def test_user_pin_memory_false_is_never_overridden():
    code = HEADER + "loader = DataLoader(TensorDataset(X, y), batch_size=4, pin_memory=False)\n" + LOOP
    new, _ = fix_code(code)
    assert "pin_memory=False" in new and "non_blocking" not in new and "xb, yb = xb.to(device), yb.to(device)" in new


def test_device_mode_adds_no_pinning():
    code = HEADER + "loader = DataLoader(TensorDataset(X, y), batch_size=4)\n" + LOOP
    new, _ = fix_code(code, DEVICE)
    assert "pin_memory" not in new and "xb, yb = xb.to(device), yb.to(device)" in new


def test_benchmark_without_cuda_says_so_and_exits_0():
    script = Path(__file__).parent.parent / "benchmarks" / "pinned_vs_unpinned.py"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0
    assert "needs a CUDA GPU" in result.stdout

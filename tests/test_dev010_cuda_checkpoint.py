"""DEV010 end to end: a checkpoint whose tensors are tagged as CUDA loads after the fix.

No GPU is needed to write such a checkpoint: `torch.save` asks
`torch.serialization.location_tag(storage)` for each storage's device and pickles that
string next to it; patching it to answer "cuda:0" writes exactly the `data.pkl` records a
GPU save writes (the tensor bytes are the same either way). Loading it on a machine without
CUDA then takes the real path: `torch.load` without `map_location` raises "Attempting to
deserialize object on a CUDA device but torch.cuda.is_available() is False" — that is
asserted on the unfixed program — and the program devfix rewrote loads it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from unittest import mock

import pytest
import torch
import torch.serialization

from devfix.engine import fix_code

PROGRAM = """\
import sys

import torch
from torch import nn

model = nn.Linear(4, 2)
if torch.cuda.is_available():
    model.cuda()
model.load_state_dict(torch.load(sys.argv[1], weights_only=True))
print("LOADED", model.weight.device, float(model.weight.sum()))
"""

PROGRAM_WITH_DEVICE = """\
import sys

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
checkpoint = torch.load(sys.argv[1], weights_only=True)
model.load_state_dict(checkpoint["model"])
print("LOADED", model.weight.device, float(model.weight.sum()))
"""


def _save_cuda_tagged(obj, path: Path) -> None:
    with mock.patch.object(torch.serialization, "location_tag", lambda storage: "cuda:0"):
        torch.save(obj, path)


def _run(script: Path, checkpoint: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run(
        [sys.executable, str(script), str(checkpoint)], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="proves the CPU-only failure; needs a machine without CUDA")
@pytest.mark.parametrize(
    "program,wrap", [(PROGRAM, False), (PROGRAM_WITH_DEVICE, True)], ids=["cpu-fallback", "device-variable"]
)
def test_cuda_tagged_checkpoint_loads_after_fix(tmp_path, program, wrap):
    layer = torch.nn.Linear(4, 2)
    state = layer.state_dict()
    checkpoint = tmp_path / "gpu_checkpoint.pt"
    _save_cuda_tagged({"model": state} if wrap else state, checkpoint)
    with zipfile.ZipFile(checkpoint) as archive:
        pickle = next(archive.read(n) for n in archive.namelist() if n.endswith("data.pkl"))
    assert b"cuda:0" in pickle and b"cpu" not in pickle, "every storage is recorded as living on cuda:0"

    original = tmp_path / "original.py"
    original.write_text(program)
    failed = _run(original, checkpoint)
    assert failed.returncode != 0
    assert "Attempting to deserialize object on a CUDA device" in failed.stderr

    new, diagnostics = fix_code(program)
    assert any(d.code == "DEV010" and d.status == "fixed" for d in diagnostics)
    assert "map_location=" in new and "weights_only=True" in new
    fixed = tmp_path / "fixed.py"
    fixed.write_text(new)
    loaded = _run(fixed, checkpoint)
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert f"LOADED cpu {float(layer.weight.detach().sum())}" in loaded.stdout

"""On a real GPU, running the scripts for real agrees with the verifier.

Skipped here (CPU-only): these are the checks that prove the simulation
faithful wherever a CUDA machine runs the suite. A script verified with
``--devices N`` runs on the machine's first N GPUs (CUDA_VISIBLE_DEVICES), and is
skipped where fewer than N exist; the one-GPU cases run on the first GPU only, so
that ``cuda:1`` fails there as it does under the verifier.
"""

import os
import subprocess
import sys

import pytest
from verify_cases import EXACT, INDEXING_RAISES, MUST_FAIL, MUST_PASS, PROJECT_FAIL, PROJECT_PASS, gpus_needed
from verify_helpers import SCRIPTS


def _gpu_count():
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


GPUS = _gpu_count()
needs_cuda = pytest.mark.skipif(GPUS == 0, reason="needs a real CUDA device (torch.cuda.is_available() is false)")


def _run(argv, gpus):
    """`python ARGV` in the scripts folder, seeing the first `gpus` GPUs only."""
    if gpus > GPUS:
        pytest.skip(f"needs {gpus} real GPUs, this machine has {GPUS}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = visible.split(",") if visible else [str(i) for i in range(GPUS)]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(ids[:gpus]))
    return subprocess.run([sys.executable, *argv], cwd=SCRIPTS, capture_output=True, text=True, timeout=300, env=env)


CASES = [(s, True, o) for s, _, o in MUST_FAIL if o in ([], ["--devices", "2"])]
CASES += [(s, False, o) for s, o in MUST_PASS if o in ([], ["--devices", "2"])]


@pytest.mark.parametrize("script,fails,opts", CASES, ids=[f"{c[0]}{' '.join(c[2])}" for c in CASES])
@pytest.mark.gpu
@needs_cuda
def test_real_gpu_agrees(script, fails, opts):
    proc = _run([script], gpus_needed(opts))
    assert (proc.returncode != 0) == fails, proc.stderr[-2000:]
    if fails and script in EXACT:
        assert EXACT[script] in proc.stderr, proc.stderr[-2000:]
    elif fails:
        # the same kind of error as the verifier reports
        assert any(k in proc.stderr for k in ("device", "numpy", "pin", "CUDA")), proc.stderr[-2000:]


@pytest.mark.gpu
@needs_cuda
def test_real_gpu_indexing_allowed():
    proc = _run(["indexing_cases.py", "allowed"], 1)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("case", sorted(INDEXING_RAISES))
@pytest.mark.gpu
@needs_cuda
def test_real_gpu_indexing_raises(case):
    proc = _run(["indexing_cases.py", case], 1)
    assert proc.returncode != 0 and INDEXING_RAISES[case] in proc.stderr, proc.stderr[-2000:]


PROJECTS = [(real, True) for _, real, _, _ in PROJECT_FAIL] + [(real, False) for _, real in PROJECT_PASS]


@pytest.mark.parametrize("argv,fails", PROJECTS, ids=[" ".join(p[0]) for p in PROJECTS])
@pytest.mark.gpu
@needs_cuda
def test_real_gpu_projects(argv, fails):
    proc = _run(argv, 1)
    assert (proc.returncode != 0) == fails, proc.stderr[-2000:]

"""On a real GPU, running the scripts for real agrees with the verifier.

Skipped here (CPU-only): these are the checks that prove the simulation
faithful wherever a CUDA machine runs the suite.
"""

import os
import subprocess
import sys

import pytest

from verify_helpers import SCRIPTS
from test_verify_verdicts import MUST_FAIL, MUST_PASS


def _cuda():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()



CASES = [(s, True) for s, _, o in MUST_FAIL if not o] + [(s, False) for s, o in MUST_PASS if not o]


@pytest.mark.parametrize("script,fails", CASES, ids=[c[0] for c in CASES])
@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs a real CUDA device (torch.cuda.is_available() is false)")
def test_real_gpu_agrees(script, fails):
    proc = subprocess.run([sys.executable, script], cwd=SCRIPTS, capture_output=True,
                          text=True, timeout=300)
    assert (proc.returncode != 0) == fails, proc.stderr[-2000:]
    if fails:
        # the same kind of error as the verifier reports
        assert any(k in proc.stderr for k in ("device", "numpy", "pin", "CUDA")), proc.stderr[-2000:]

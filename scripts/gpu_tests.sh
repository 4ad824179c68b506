#!/usr/bin/env bash
# The `gpu` tests, then the rest of the suite (SIGINT at SUITE_TIMEOUT still prints its summary), on a machine with a real CUDA device (CI has none).
# Packages the machine lacks travel as wheels in .whl/ (see CONTRIBUTING.md); logs go to
# $OUT when it is set, else to the current folder.
set -uo pipefail
cd "$(dirname "$0")/.."
logs="${OUT:-.}"
if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, libcst; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'libcst', libcst.__version__ if hasattr(libcst, '__version__') else '')"
jobs="${JOBS:-12}"
python3 -m pytest -m gpu -p no:cacheprovider -q -n "$jobs" -rfEs --snapshot-warn-unused 2>&1 | tee "$logs/gpu-tests.log" | tail -40
gpu_status=${PIPESTATUS[0]}
timeout -s INT "${SUITE_TIMEOUT:-300}" python3 -m pytest -m "not gpu" -p no:cacheprovider -q -n "$jobs" -rfE --snapshot-warn-unused 2>&1 | tee "$logs/full-suite.log" | tail -40
suite_status=${PIPESTATUS[0]}
echo "gpu tests: exit $gpu_status; whole suite: exit $suite_status"
exit $(( gpu_status || suite_status ))

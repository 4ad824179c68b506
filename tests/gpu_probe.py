"""Run a script as __main__ and record, for every top-level forward, where the weights were.

Used by the `gpu` tests: on a CUDA machine a fixed fixture must run with its model on the
GPU, not merely run. Prints one JSON line `DEVFIX_PROBE {...}` at exit.
"""

import atexit
import json
import runpy
import sys

from torch.nn.modules.module import register_module_forward_pre_hook

devices = set()
depth = [0]


def _record(module, inputs):
    # The module's own registry, not `parameters(recurse=False)`: a model may override
    # `parameters()` with a signature of its own (MADDPG's per-agent critics do).
    for parameter in module._parameters.values():
        if parameter is not None:
            devices.add(parameter.device.type)


register_module_forward_pre_hook(_record)
atexit.register(lambda: print("DEVFIX_PROBE " + json.dumps({"parameter_devices": sorted(devices)})))

script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")

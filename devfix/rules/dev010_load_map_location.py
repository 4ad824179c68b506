"""DEV010 load-map-location: `torch.load(f)` without `map_location` gets one."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from devfix.analysis.tensors import feeds_load_state_dict
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword, keyword

LOADERS = ("torch.load", "torch.serialization.load")


class LoadMapLocation(Rule):
    code = "DEV010"
    name = "load-map-location"
    summary = "`torch.load(f)` without `map_location` fails on a CPU-only machine for a checkpoint saved on a GPU."
    why = """
`torch.save` records the device of every tensor. Without `map_location`, `torch.load`
puts each tensor back on that device, so a checkpoint written on a GPU machine fails to
load on a CPU-only one ("Attempting to deserialize object on a CUDA device but
torch.cuda.is_available() is False"), and on a multi-GPU machine lands on the GPU it was
saved from. `map_location=device` loads it where the program runs. When there is no device
variable and the result only feeds `load_state_dict` (which copies into the model's own
tensors wherever they are), `map_location="cpu"` is enough. `weights_only=` is kept.
"""
    example = """
model.load_state_dict(torch.load("checkpoint.pt", weights_only=True))
"""
    use_instead = """
model.load_state_dict(torch.load("checkpoint.pt", weights_only=True, map_location=device))
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "state = torch.load('ckpt.pt', weights_only=True)\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "state = torch.load('ckpt.pt', weights_only=True, map_location=device)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nmodel.load_state_dict(torch.load('w.pt'))\n",
            "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nmodel.load_state_dict(torch.load('w.pt', map_location='cpu'))\n",
        ),
    )
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "state = torch.load('ckpt.pt', map_location=device)\n",
        "import torch\nstate = torch.load('ckpt.pt', 'cpu')\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for call in facts.data.calls:
            if facts.qualname(call.func, at=call) in LOADERS:
                finding = self._check_load(ctx, call)
                if finding is not None:
                    yield finding

    def _check_load(self, ctx: RuleContext, call: cst.Call) -> Optional[Finding]:
        if keyword(call, "map_location") is not None:
            return None
        if any(arg.star for arg in call.args) or len([a for a in call.args if a.keyword is None]) != 1:
            return None  # `torch.load(f, loc)` or `**kwargs`: map_location may be there
        facts = ctx.facts
        source = ctx.module.code_for_node(call.args[0].value)
        message = f"`torch.load({source})` has no `map_location`: a checkpoint saved on a GPU fails to load without one"
        device = facts.device_at(call)
        if device is not None:
            if device.kind == "planned":
                facts.need_device(call, self.code)
            code = device.code
        elif feeds_load_state_dict(facts, call):
            code = facts.quote("cpu")  # load_state_dict copies into the parameters wherever they are
        elif not facts.places_tensors:
            # Code that places nothing (a CPU-only script, a library helper) gets its tensors
            # back where they were saved; choosing a device for its callers is not ours to do.
            return None
        else:
            device = facts.need_device(call, self.code)
            if device is None:
                return self.finding(call, message, hint="pass `map_location=` (a device, or \"cpu\")")
            code = device.code
        return self.finding(call, f"{message}; load with `map_location={code}`", [Replace(call, add_keyword(call, "map_location", ctx.expression(code)))])

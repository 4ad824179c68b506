"""DEV008 loop-created-tensor: factories inside a training loop that meet device tensors get `device=`."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
from libcst.helpers import ensure_type

from devfix.analysis.devices import DeviceChoice
from devfix.analysis.facts import FileFacts
from devfix.analysis.plan import Move
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword, assigned_name, evidence_line, expression, move_to

NO_DEVICE_HINT = "create it with `device=` the device of the tensors it meets"


class LoopCreatedTensor(Rule):
    code = "DEV008"
    name = "loop-created-tensor"
    summary = "A tensor created in a training loop or step without `device=` meets device tensors on the CPU."
    fix_summary = "Tensor factories in a training loop whose results meet device tensors (GAN labels, masks, positions) get `device=device`."
    verify_hint = "create it on the device: torch.full(..., device=device)"
    why = """
`torch.zeros`, `torch.ones`, `torch.full`, `torch.randn`, `torch.arange` ... create CPU
tensors unless told otherwise. Inside a loop over a data loader they typically become the
real/fake targets of a GAN, noise fed to a generator, masks or positions, and then meet the
model's outputs or the moved batch on the GPU: "Expected all tensors to be on the same
device". Creating them on the device directly (`device=device`) is correct and avoids a
host-to-device copy per step. Factories whose results only go to CPU-side code, and ones
that already say `device=` or are moved with `.to()`, are left alone. The same holds for a
training step written without a loop (`inputs = torch.randn(...)`, then `model(inputs)`), as
long as the model it feeds is built and moved in that same script or function.
"""
    example = """
for real, _ in loader:
    real = real.to(device)
    target = torch.ones(real.size(0), 1)
    loss = criterion(netD(real), target)
"""
    use_instead = """
for real, _ in loader:
    real = real.to(device)
    target = torch.ones(real.size(0), 1, device=device)
    loss = criterion(netD(real), target)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "netD = nn.Linear(4, 1).to(device)\ncriterion = nn.BCEWithLogitsLoss()\n\n\n"
            "def train(loader):\n    for real, _ in loader:\n        real = real.to(device)\n"
            "        target = torch.ones(real.size(0), 1)\n        loss = criterion(netD(real), target)\n",
            "import torch\nfrom torch import nn\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "netD = nn.Linear(4, 1).to(device)\ncriterion = nn.BCEWithLogitsLoss()\n\n\n"
            "def train(loader):\n    for real, _ in loader:\n        real = real.to(device)\n"
            "        target = torch.ones(real.size(0), 1, device=device)\n        loss = criterion(netD(real), target)\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "netD = nn.Linear(4, 1).to(device)\ncriterion = nn.BCEWithLogitsLoss()\n\n\n"
        "def train(loader):\n    for real, _ in loader:\n        real = real.to(device)\n"
        "        target = torch.ones(real.size(0), 1, device=device)\n        loss = criterion(netD(real), target)\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for move in ctx.facts.plan.by_rule(self.code):
            yield self._fix(ctx, move)

    def _fix(self, ctx: RuleContext, move: Move) -> Finding:
        facts = ctx.facts
        call = move.origin.node
        name = assigned_name(facts, call)
        what = f"'{name}'" if name else f"`{facts.code(ensure_type(call, cst.Call).func)}(...)`"
        where = (
            "inside a loop"
            if move.origin.loop is not None
            else ("before the loop" if _meets_in_a_later_loop(facts, move) else "in a training step")
        )
        message = f"{what} is created on the CPU {where} and meets {evidence_line(facts, move.evidence)}"
        if not move.fixable:
            # the reason says what stops the fix (a dataset that must stay on the CPU, a CPU
            # value it goes with): "create it on the device" would contradict it
            return self.finding(call, f"{message}; not fixed: {move.reason}")
        if move.evidence and all(origin.kind == "module" for origin in move.evidence):
            # a helper of a module's forward (`sample_gaussian(mu, log_var)`): what it meets lives
            # wherever the module does, which the program's device variable need not be
            relative = facts.devices.relative(call, move.meetings)
            device = DeviceChoice(relative) if relative is not None else None
        else:
            device = facts.devices.at(call, self.code, move.evidence, move.meetings)
        if device is None:
            return self.finding(call, f"{message}; no device expression is in reach here", hint=NO_DEVICE_HINT)
        if move.origin.kind == "host":
            new = move_to(expression(call), ctx.expression(device.code))
            return self.finding(
                call, f"{message}; moved to `{device.code}` where it is made", [Replace(call, new)], device=device
            )
        new = add_keyword(ensure_type(call, cst.Call), "device", ctx.expression(device.code))
        return self.finding(
            call, f"{message}; created with `device={device.code}`", [Replace(call, new)], device=device
        )


def _meets_in_a_later_loop(facts: FileFacts, move: Move) -> bool:
    """An accumulator (`preds = torch.tensor([])`) made before the loop that joins device
    outputs to it."""
    tree = facts.tree
    for meeting in move.meetings:
        loop = tree.enclosing(meeting.node, (cst.For, cst.While))
        if loop is not None and not tree.is_inside(move.origin.node, loop):
            return True
    return False

"""DEV014 loader-not-pinned (opt-in): a loader whose batches are moved to the device, unpinned."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.datasets import LoaderPlan
from devfix.analysis.values import Place
from devfix.edits import Edit, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword, keyword


class LoaderNotPinned(Rule):
    code = "DEV014"
    name = "loader-not-pinned"
    summary = "A DataLoader whose batches are moved to the device does not pin memory (opt-in speed rule)."
    fix_summary = "Adds `pin_memory=True` to correct loaders whose batches are moved to the device."
    enabled_by_default = False
    why = """
Host-to-device copies from pageable memory go through a staging buffer and cannot overlap
with compute. `pin_memory=True` makes the loader hand out page-locked batches, which copy
faster and allow `.to(device, non_blocking=True)`. The program is correct without it, so
this rule is off unless selected (`--extend-select DEV014`). It only pins loaders over CPU
data whose loops move the batches, never a loader with an explicit `pin_memory=`, and never
with `dataset-placement = "device"`.
"""
    example = """
loader = DataLoader(dataset, batch_size=64, shuffle=True)
for x, y in loader:
    x, y = x.to(device), y.to(device)
"""
    use_instead = """
loader = DataLoader(dataset, batch_size=64, shuffle=True, pin_memory=True)
for x, y in loader:
    x, y = x.to(device), y.to(device)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
            "loader = DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2)\n"
            "for (x,) in loader:\n    x = x.to(device)\n    print(model(x))\n",
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
            "loader = DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2, pin_memory=True)\n"
            "for (x,) in loader:\n    x = x.to(device, non_blocking=True)\n    print(model(x))\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
        "loader = DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2, pin_memory=False)\n"
        "for (x,) in loader:\n    x = x.to(device)\n    print(model(x))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        if facts.dataset_placement != "pinned":
            return
        for plan in sorted(facts.loader_plans.values(), key=lambda p: facts.tree.order(p.call)):
            if (
                plan.info.pin is not None
                or plan.info.spread
                or plan.add_pin
                or plan.on_device_after
                or plan.info.collate
            ):
                continue
            transfers = self._transfers(ctx, plan)
            if not transfers:
                continue
            edits: list[Edit] = [Replace(plan.call, add_keyword(plan.call, "pin_memory", cst.Name("True")))]
            edits += [
                Replace(call, add_keyword(call, "non_blocking", cst.Name("True")))
                for call in transfers
                if keyword(call, "non_blocking") is None
            ]
            message = (
                "this DataLoader's batches are moved to the device but it does not pin memory; "
                "`pin_memory=True` and `non_blocking=True` transfers let the copies overlap with compute"
            )
            yield self.finding(plan.call, message, edits)

    @staticmethod
    def _transfers(ctx: RuleContext, plan: LoaderPlan) -> list[cst.Call]:
        """The loop's own `.to(device)` / `.cuda()` of this loader's batches."""
        program = ctx.facts.program
        key = id(plan.call)
        found = []
        for call, receiver, place in program.tensor_moves:
            if place is not Place.DEVICE or call in found:
                continue
            if any(o.kind == "batch" and o.source == key for o in receiver.origins):
                found.append(call)
        return found

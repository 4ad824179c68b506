"""DEV014 loader-not-pinned (opt-in): a loader whose batches are moved to the device, unpinned."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword


class LoaderNotPinned(Rule):
    code = "DEV014"
    name = "loader-not-pinned"
    summary = "A DataLoader whose batches are moved to the device does not pin memory (opt-in speed rule)."
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
            "for (x,) in loader:\n    x = x.to(device)\n    print(model(x))\n",
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
        for site in facts.loader_sites:
            if site.pin_arg is not None or site.spread or site.add_pin or site.on_device_after or site.escapes:
                continue
            if not site.loops or not all(batch.moved and not batch.needs_transfer for batch in site.loops):
                continue
            message = "this DataLoader's batches are moved to the device but it does not pin memory; `pin_memory=True` makes the copies faster"
            yield self.finding(site.call, message, [Replace(site.call, add_keyword(site.call, "pin_memory", cst.Name("True")))])

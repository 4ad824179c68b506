"""DEV005 loader-pin-memory: never pin GPU data; pin where devfix writes the transfers."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.datasets import LoaderPlan
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword


def remove_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """Drop `arg` from a call; the argument before it takes over its trailing comma."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is arg)
    del args[index]
    if index == len(args) and args:
        args[-1] = args[-1].with_changes(comma=arg.comma)
    return call.with_changes(args=args)


class LoaderPinMemory(Rule):
    code = "DEV005"
    name = "loader-pin-memory"
    summary = "`pin_memory=True` over GPU data crashes; loaders whose batches devfix moves get `pin_memory=True`."
    fix_summary = "Removes `pin_memory=True` over GPU data (a crash); pins loaders whose transfers devfix writes, with `non_blocking=True`."
    verify_hint = (
        "pin_memory=True needs CPU data: keep the dataset on the CPU (move batches in the loop) or drop pin_memory"
    )
    why = """
Pinning copies each batch into page-locked host memory so that `.to(device, non_blocking=True)`
can overlap the copy with compute. Over a dataset whose tensors already live on the GPU it
crashes at the first batch ("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can
be pinned"): that `pin_memory=True` is removed and reported, always. When devfix itself
writes the batch transfers of a loop (DEV004) or moves data out of a dataset (DEV006), the
loader feeding that loop gets `pin_memory=True` and the new transfers `non_blocking=True`:
the fix is written the fast way. Correct code is not touched for speed alone (see the opt-in
DEV014), and a `pin_memory=` you wrote is never overridden except in the crash case. With
`dataset-placement = "device"` devfix never adds pinning.
"""
    example = """
dataset = TensorDataset(X.to(device), y.to(device))
loader = DataLoader(dataset, batch_size=32, pin_memory=True)
"""
    use_instead = """
# dataset-placement = "device": the data stays on the GPU, nothing is pinned
dataset = TensorDataset(X.to(device), y.to(device))
loader = DataLoader(dataset, batch_size=32)
"""
    invalid = (
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "loader = DataLoader(TensorDataset(torch.ones(4, 2).to(device)), batch_size=2, pin_memory=True)\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
        "loader = DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2)\n"
        "for (x,) in loader:\n    x = x.to(device)\n    print(model(x))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for plan in sorted(facts.loader_plans.values(), key=lambda p: facts.tree.order(p.call)):
            if plan.remove_pin and plan.info.pin is not None:
                yield self._unpin(plan)
            elif plan.add_pin:
                yield self._pin(plan)

    def _unpin(self, plan: LoaderPlan) -> Finding:
        message = (
            "`pin_memory` over a dataset whose tensors live on the device crashes "
            "(\"cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned\"); removed"
        )
        assert plan.info.pin is not None
        return self.finding(plan.info.pin, message, [Replace(plan.call, remove_arg(plan.call, plan.info.pin))])

    def _pin(self, plan: LoaderPlan) -> Finding:
        message = "the batches of this DataLoader are moved to the device by devfix: `pin_memory=True` lets the transfers be `non_blocking`"
        return self.finding(
            plan.call, message, [Replace(plan.call, add_keyword(plan.call, "pin_memory", cst.Name("True")))]
        )

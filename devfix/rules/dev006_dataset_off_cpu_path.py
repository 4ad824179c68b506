"""DEV006 dataset-off-cpu-path: device transfers inside a dataset move out into the loop."""

from __future__ import annotations

import os
from collections.abc import Iterator

import libcst as cst

from devfix.analysis.datasets import LoaderPlan, Transfer
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext


class DatasetOffCpuPath(Rule):
    code = "DEV006"
    name = "dataset-off-cpu-path"
    summary = "`.to(device)` inside a Dataset or on TensorDataset arguments breaks worker processes and pinning."
    fix_summary = "Device transfers inside a `Dataset` or on `TensorDataset` arguments move into the loop (`pinned`, default) or become one move before the dataset (`device`)."
    verify_hint = "do not touch the device inside a Dataset used by worker processes; move the batch in the loop"
    why = """
Dataset tensors should reach the device once per batch, through the training loop, never
from inside a `Dataset`. A `.to(device)` / `.cuda()` in a `Dataset`'s `__getitem__` copies
one sample at a time, and any device work inside a dataset breaks with `num_workers > 0`
("Cannot re-initialize CUDA in forked subprocess"); GPU tensors behind a `pin_memory=True`
loader crash ("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned").

With `dataset-placement = "pinned"` (the default) the transfer moves out of the dataset: the
dataset keeps CPU tensors, the loop moves each batch (DEV004) and the loader pins memory
(DEV005). With `dataset-placement = "device"` (small in-memory data) tensors moved once
before the dataset is built stay there, nothing is pinned, and only per-sample transfers in
`__getitem__` are removed. Where removing the transfer is not certain (the tensor is
transformed after the move, kept in a local variable, moved where it is defined and maybe
used elsewhere, or the loader's batches go where devfix cannot see them being moved) the
diagnostic says why and nothing is changed; where that loader neither forks workers nor pins,
the per-sample copy works, only slowly, and nothing is said. Datasets from other modules (torchvision...)
are left alone.
"""
    example = """
class Samples(Dataset):
    def __getitem__(self, i):
        return self.X[i].to(device), self.y[i].to(device)

loader = DataLoader(Samples(), batch_size=32, num_workers=4)
for x, y in loader:
    loss = criterion(model(x), y)
"""
    use_instead = """
class Samples(Dataset):
    def __getitem__(self, i):
        return self.X[i], self.y[i]

loader = DataLoader(Samples(), batch_size=32, num_workers=4, pin_memory=True)
for x, y in loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    loss = criterion(model(x), y)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
            "loader = DataLoader(TensorDataset(torch.ones(4, 2).to(device)), batch_size=2, num_workers=2)\n"
            "for (x,) in loader:\n    print(model(x))\n",
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
            "loader = DataLoader(TensorDataset(torch.ones(4, 2)), batch_size=2, num_workers=2, pin_memory=True)\n"
            "for (x,) in loader:\n    x = x.to(device, non_blocking=True)\n    print(model(x))\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 1).to(device)\n"
        "loader = DataLoader(TensorDataset(torch.ones(4, 2).to(device)), batch_size=2)\n"
        "for (x,) in loader:\n    print(model(x))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        plans = sorted(facts.loader_plans.values(), key=lambda p: facts.tree.order(p.call))
        # A transfer in a dataset class feeding several loaders is hoisted only if every one agrees.
        verdicts: dict[int, list[bool]] = {}
        transfers: dict[int, Transfer] = {}
        owner: dict[int, LoaderPlan] = {}
        breaks: dict[int, bool] = {}  # some loader over it forks workers or pins: it crashes as it is
        for plan in plans:
            for transfer in plan.hoist + plan.blocked:
                verdicts.setdefault(id(transfer.call), []).append(transfer in plan.hoist)
                transfers.setdefault(id(transfer.call), transfer)
                owner.setdefault(id(transfer.call), plan)
                breaks[id(transfer.call)] = breaks.get(id(transfer.call), False) or plan.pins or plan.info.workers
        for key, transfer in transfers.items():
            if transfer.linked is not None and all(verdicts[key]):
                continue  # the dataset's own file removes them, told by this file's loops (below)
            if all(verdicts[key]):
                yield self._hoist(ctx, transfer, owner[key])
            elif breaks[key]:
                reason = (
                    transfer.reason or "the same dataset feeds a loader whose batches devfix cannot see being moved"
                )
                yield self.finding(
                    transfer.call,
                    f"{self._what(ctx, transfer)} cannot be moved out of the dataset with certainty: {reason}",
                    hint="move the tensor to the device in the training loop instead",
                )
        for transfer, reader in facts.transfers_taken_over:
            where = os.path.relpath(reader, os.path.dirname(facts.path) or ".").replace(os.sep, "/")
            message = (
                f"{self._what(ctx, transfer)} does device work inside the dataset (breaks worker processes and "
                f"pinning); moved out: the loops of {where} move each batch"
            )
            receiver = cst.ensure_type(transfer.call.func, cst.Attribute).value
            yield self.finding(transfer.call, message, [Replace(transfer.call, receiver)])
        for plan in plans:
            if plan.workers_on_device and not plan.blocked:
                message = 'worker processes (`num_workers`) over a dataset whose tensors live on the device fail ("Cannot re-initialize CUDA in forked subprocess")'
                yield self.finding(
                    plan.call,
                    message,
                    hint="use `num_workers=0` with data on the device, or `--dataset-placement pinned`",
                )

    def _what(self, ctx: RuleContext, transfer: Transfer) -> str:
        if transfer.linked is not None:
            return f"`{transfer.linked.node.name.value}.__getitem__` ({transfer.linked.path})"
        code = ctx.facts.code(transfer.call)
        if transfer.where == "TensorDataset":
            return f"`{code}` in a TensorDataset"
        klass = transfer.klass.name if transfer.klass is not None else "the dataset"
        return f"`{code}` in {klass}.{transfer.where}"

    def _hoist(self, ctx: RuleContext, transfer: Transfer, plan: LoaderPlan) -> Finding:
        receiver = cst.ensure_type(transfer.call.func, cst.Attribute).value
        mode = ctx.facts.dataset_placement
        if plan.on_device_after:
            then = "removed: the dataset's tensors already live on the device"
        else:
            then = "moved out: the loop moves each batch" + (
                " from pinned memory" if mode == "pinned" and plan.pins_after else ""
            )
        message = f"{self._what(ctx, transfer)} does device work inside the dataset (breaks worker processes and pinning); {then}"
        return self.finding(transfer.call, message, [Replace(transfer.call, receiver)])

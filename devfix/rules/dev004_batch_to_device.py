"""DEV004 batch-to-device: the tensors a loader loop yields are moved at the top of the loop."""

from __future__ import annotations

from typing import Iterator, List, Optional

from devfix.analysis.loops import BatchLoop, SlicedBatch
from devfix.analysis.scopes import dotted_name
from devfix.edits import InsertAfter, InsertBefore, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import move_to

NO_DEVICE_HINT = "declare a device and move the batch with `.to(device)` at the top of the loop"


class BatchToDevice(Rule):
    code = "DEV004"
    name = "batch-to-device"
    needs_placement = True
    summary = "Batches from a data loader reach the model on the CPU; move them at the top of the loop."
    why = """
A `DataLoader` yields CPU tensors. With the model on the GPU, the first forward fails with
"Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same"
or "Expected all tensors to be on the same device". devfix moves, in one statement at the top
of the loop body and in your own names, exactly the tensors that reach the model, the loss
or a metric (anything compared with the model's outputs). Tensors that only go to CPU-side
code stay where they are: the `lengths` of `pack_padded_sequence` (CUDA lengths are an error),
NumPy / scikit-learn arguments, values that are only printed or logged. Tensors you already
move are left alone, and the model's device is never assumed to be CUDA: the fix uses the
device in reach (`device`, a `device` parameter, `self.device`, `args.device`) or, in a
helper that only receives the model, `next(model.parameters()).device`. Where the loader pins
memory, the transfers are written with `non_blocking=True`.

Batches unpacked on the next line (`x, y = batch`) are moved after that line; list batches
used by index become `batch = [t.to(device) for t in batch]`; dict batches
`batch = {k: v.to(device) for k, v in batch.items()}`. Manual batches sliced from whole
tensors in a `range` loop (`xb = X[i:i + bs]`) are moved where they are sliced, which keeps
the full data set in host memory whatever its size.
"""
    example = """
for epoch in range(epochs):
    for i, (inputs, labels) in enumerate(train_loader):
        outputs = model(inputs)
        loss = criterion(outputs, labels)
"""
    use_instead = """
for epoch in range(epochs):
    for i, (inputs, labels) in enumerate(train_loader):
        inputs, labels = inputs.to(device), labels.to(device)
        outputs = model(inputs)
        loss = criterion(outputs, labels)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\ncriterion = nn.CrossEntropyLoss()\n"
            "loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4)\n"
            "for x, y in loader:\n    loss = criterion(model(x), y)\n",
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\ncriterion = nn.CrossEntropyLoss()\n"
            "loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4, pin_memory=True)\n"
            "for x, y in loader:\n    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)\n    loss = criterion(model(x), y)\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\n\n\ndef evaluate(loader):\n"
        "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n        print((model(x).argmax(1) == y).sum().item())\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for batch in facts.batch_loops:
            finding = self._check_loop(ctx, batch)
            if finding is not None:
                yield finding
        for sliced in facts.sliced_batches:
            yield self._check_slice(ctx, sliced)

    def _check_loop(self, ctx: RuleContext, batch: BatchLoop) -> Optional[Finding]:
        loader = f"'{dotted_name(batch.loader_expr)}'" if dotted_name(batch.loader_expr) else "a DataLoader"
        node = batch.anchor if batch.after and batch.anchor is not None else batch.loop
        if batch.reason is not None:
            return self.finding(node, f"batches of {loader} are not all moved to the device: {batch.reason}", hint=batch.reason)
        if not batch.to_move or batch not in ctx.facts.loops_needing_transfer:
            return None  # nothing to move, or the loader's data stays on the device
        names = ", ".join(f"'{name}'" for name in batch.to_move)
        verb = "reach" if len(batch.to_move) > 1 else "reaches"
        message = f"{names} from {loader} {verb} the model on the CPU"
        device = None
        if ctx.facts.device_at(batch.loop) is not None or self._model_follows(ctx, batch):
            device = ctx.facts.need_device(batch.loop, self.code)
        if device is None or batch.anchor is None:
            return self.finding(node, message, hint=NO_DEVICE_HINT)
        site = ctx.facts.loader_site(batch)
        non_blocking = site.pins_after if site is not None else ctx.facts.loader_pins(batch.loader)
        statement = ctx.statement(self._transfer(batch, device.code, non_blocking))
        edit = InsertAfter(batch.anchor, [statement]) if batch.after else InsertBefore(batch.anchor, [statement])
        where = "where the batch is unpacked" if batch.after else "at the top of the loop"
        return self.finding(node, f"{message}; moved to `{device.code}` {where}", [edit])

    @staticmethod
    def _model_follows(ctx: RuleContext, batch: BatchLoop) -> bool:
        """A new device declaration is only safe if the model goes there too: it is derived
        from the model (`next(model.parameters()).device`) or a model built in this file is
        moved by DEV003. A model from elsewhere may stay on the CPU."""
        code = ctx.facts.declaration_code_at(batch.loop)
        if code is not None and code.startswith("next("):
            return True
        return any(model.kind == "model" for model in ctx.facts.models)

    @staticmethod
    def _transfer(batch: BatchLoop, device: str, non_blocking: bool) -> str:
        """The one statement that moves the batch, in the user's names."""
        args = f"{device}, non_blocking=True" if non_blocking else device
        if batch.kind == "list":
            name = batch.names[0]
            return f"{name} = [item.to({args}) for item in {name}]"
        if batch.kind == "dict":
            name = batch.names[0]
            return f"{name} = {{key: value.to({args}) for key, value in {name}.items()}}"
        names: List[str] = list(batch.to_move)
        return f"{', '.join(names)} = {', '.join(f'{name}.to({args})' for name in names)}"

    def _check_slice(self, ctx: RuleContext, sliced: SlicedBatch) -> Finding:
        message = f"'{sliced.target}' is sliced from the CPU tensor '{sliced.source}' and reaches the model on the CPU"
        device = ctx.facts.need_device(sliced.subscript, self.code)
        if device is None:
            return self.finding(sliced.subscript, message, hint=NO_DEVICE_HINT)
        new = move_to(sliced.subscript, ctx.expression(device.code))
        return self.finding(sliced.subscript, f"{message}; moved where it is sliced", [Replace(sliced.subscript, new)])

"""DEV004 batch-to-device: batches that meet the model on the CPU are moved where the loop yields them."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.plan import Move
from devfix.analysis.values import Kind
from devfix.edits import InsertAfter, InsertBefore, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext, names_list
from devfix.rules.common import evidence_line, move_to

NO_DEVICE_HINT = "move the batch to the model's device at the top of the loop: `x = x.to(device)`"
WRAPPERS = ("enumerate", "tqdm", "trange", "iter", "zip")


class BatchToDevice(Rule):
    code = "DEV004"
    name = "batch-to-device"
    summary = "Batches from a data loader meet the model on the CPU; move them where the loop yields them."
    fix_summary = "Batches a loader loop yields that reach the model, loss or a metric are moved at the top of the loop, in your names and one statement; CPU-only values (packed-sequence lengths, NumPy, logging) stay."
    verify_hint = "move each batch to the device at the top of the loop: x, y = x.to(device), y.to(device)"
    why = """
A `DataLoader` yields CPU tensors. With the model on the GPU, the first forward fails with
"Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same"
or "Expected all tensors to be on the same device". devfix moves, in one statement at the top
of the loop body and in your own names, exactly the tensors that meet the model (or its
outputs, in the loss or a metric) on the CPU. Tensors that only go to CPU-side code stay where
they are: the `lengths` of `pack_padded_sequence`, NumPy / scikit-learn arguments, values that
are only printed or logged. Tensors you already move, by any means devfix can follow
(`.to(device)`, `.cuda()`, `.type(torch.cuda.FloatTensor)`), are left alone, and the model's
device is never assumed to be CUDA: the fix reuses the device your program moved the model
with. Where the loader pins memory, the transfers are written with `non_blocking=True`.

Batches unpacked on the next line (`x, y = batch`) are moved after that line; list batches
used by index become `batch = [item.to(device) for item in batch]`; dict batches
`batch = {key: value.to(device) for key, value in batch.items()}`. Manual batches sliced from
whole tensors in a loop (`xb = X[i:i + bs]`, `torch.from_numpy(X[i:i + bs])`) are moved where
they are made, which keeps the full data set in host memory whatever its size.
"""
    example = """
model = Net().to(device)
for epoch in range(epochs):
    for i, (inputs, labels) in enumerate(train_loader):
        outputs = model(inputs)
        loss = criterion(outputs, labels)
"""
    use_instead = """
model = Net().to(device)
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
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "model = nn.Linear(4, 2)\nloader = DataLoader(TensorDataset(torch.randn(8, 4)), batch_size=4)\n"
        "for (x,) in loader:\n    print(model(x))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        groups: dict[int, list[Move]] = {}
        for move in ctx.facts.plan.by_rule(self.code):
            origin = move.origin
            if origin.kind == "batch" and origin.binder is not None:
                groups.setdefault(id(origin.binder), []).append(move)
            else:
                yield self._made_in_loop(ctx, move)
        for moves in groups.values():
            yield self._batch(ctx, moves)

    # -- batches a loop yields -----------------------------------------------------------------------
    def _batch(self, ctx: RuleContext, moves: list[Move]) -> Finding:
        facts = ctx.facts
        binder = moves[0].origin.binder
        assert binder is not None
        names = self._ordered_names(binder, [m.origin.name for m in moves if m.origin.name])
        evidence = [o for m in moves for o in m.evidence]
        source = self._source(ctx, binder)
        node = binder.target if isinstance(binder, cst.For) else binder
        verb = "are" if len(names) > 1 else "is"
        message = f"{names_list(names)} from {source} {verb} on the CPU and meet{'' if len(names) > 1 else 's'} {evidence_line(facts, evidence)}"
        blocked = next((m for m in moves if not m.fixable), None)
        if blocked is not None:
            return self.finding(node, f"{message}; not moved: {blocked.reason}", hint=NO_DEVICE_HINT)
        anchor, after = self._anchor(ctx, binder)
        if anchor is None:
            return self.finding(node, f"{message}; devfix cannot place a transfer statement here", hint=NO_DEVICE_HINT)
        device = facts.devices.at(anchor, self.code, evidence)
        if device is None:
            return self.finding(node, f"{message}; no device expression is in reach here", hint=NO_DEVICE_HINT)
        plan = facts.loader_plan_of(moves[0].origin.source)
        non_blocking = plan is not None and plan.pins_after
        code = self._transfer(ctx, binder, names, device.code, non_blocking)
        if code is None:
            return self.finding(
                node, f"{message}; the batch is used through attributes devfix cannot move", hint=NO_DEVICE_HINT
            )
        statement = ctx.statement(code)
        edit = InsertAfter(anchor, [statement]) if after else InsertBefore(anchor, [statement])
        where = "where the batch is unpacked" if after else "at the top of the loop"
        return self.finding(node, f"{message}; moved to `{device.code}` {where}", [edit], device=device)

    @staticmethod
    def _ordered_names(binder: cst.CSTNode, names: list[str]) -> list[str]:
        """The names in the order the loop target (or unpacking) writes them."""
        target = (
            binder.target
            if isinstance(binder, cst.For)
            else (binder.targets[0].target if isinstance(binder, cst.Assign) else None)
        )
        order: list[str] = []
        stack: list[cst.BaseExpression] = [target] if target is not None else []
        while stack:
            current = stack.pop(0)
            if isinstance(current, cst.Name):
                order.append(current.value)
            elif isinstance(current, (cst.Tuple, cst.List)):
                stack[0:0] = [element.value for element in current.elements]
            elif isinstance(current, cst.StarredElement):
                stack.insert(0, current.value)
        unique = list(dict.fromkeys(names))
        return sorted(unique, key=lambda name: order.index(name) if name in order else len(order))

    def _source(self, ctx: RuleContext, binder: cst.CSTNode) -> str:
        if isinstance(binder, cst.For):
            iterable = binder.iter
            while (
                isinstance(iterable, cst.Call)
                and iterable.args
                and isinstance(iterable.func, (cst.Name, cst.Attribute))
            ):
                name = iterable.func.value if isinstance(iterable.func, cst.Name) else iterable.func.attr.value
                if name not in WRAPPERS:
                    break
                iterable = iterable.args[0].value
            return f"'{ctx.facts.code(iterable, 30)}'"
        if isinstance(binder, cst.Assign):
            return f"'{ctx.facts.code(binder.value, 30)}'"  # `x, y = data`, `x, y = next(it)`
        return "the batch"

    @staticmethod
    def _anchor(ctx: RuleContext, binder: cst.CSTNode) -> tuple[cst.BaseStatement | None, bool]:
        tree = ctx.facts.tree
        if isinstance(binder, cst.For):
            if isinstance(binder.body, cst.IndentedBlock) and binder.body.body:
                return binder.body.body[0], False
            return None, False
        statement = tree.statement_of(binder)
        if isinstance(statement, cst.SimpleStatementLine) and statement.body[-1] is binder:
            return statement, True
        return None, False

    @staticmethod
    def _transfer(
        ctx: RuleContext, binder: cst.CSTNode, names: list[str], device: str, non_blocking: bool
    ) -> str | None:
        """The one statement that moves the batch, in the user's names."""
        program = ctx.facts.program
        args = f"{device}, non_blocking=True" if non_blocking else device
        tensors, parts = [], []
        for name in names:
            value = program.bound.get((id(binder), name))
            accesses = program.batch_accesses.get((id(binder), name), set())
            if value is not None and value.kind is Kind.TENSOR:
                tensors.append(name)
            elif "attr" in accesses:
                return None
            elif accesses & {"key", "items", "splat"} and not accesses & {"index"}:
                parts.append(f"{name} = {{key: value.to({args}) for key, value in {name}.items()}}")
            else:
                parts.append(f"{name} = [item.to({args}) for item in {name}]")
        if tensors:
            parts.insert(0, f"{', '.join(tensors)} = {', '.join(f'{n}.to({args})' for n in tensors)}")
        return "; ".join(parts) if parts else None

    # -- manual batches: slices and host data in a loop ---------------------------------------------------
    def _made_in_loop(self, ctx: RuleContext, move: Move) -> Finding:
        facts = ctx.facts
        node = move.origin.node
        what = f"`{facts.code(node, 40)}`"
        message = f"{what} is made on the CPU inside a loop and meets {evidence_line(facts, move.evidence)}"
        if not move.fixable:
            return self.finding(node, f"{message}; not moved: {move.reason}", hint=NO_DEVICE_HINT)
        device = facts.devices.at(node, self.code, move.evidence)
        if device is None:
            return self.finding(node, f"{message}; no device expression is in reach here", hint=NO_DEVICE_HINT)
        new = move_to(node, ctx.expression(device.code))  # type: ignore[arg-type]
        return self.finding(
            node, f"{message}; moved to `{device.code}` where it is made", [Replace(node, new)], device=device
        )

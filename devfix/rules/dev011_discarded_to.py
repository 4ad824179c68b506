"""DEV011 discarded-to: `x.to(device)` as a statement on a tensor does nothing; assign it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext


class DiscardedTo(Rule):
    code = "DEV011"
    name = "discarded-to"
    summary = "`x.to(device)` on a tensor returns a copy; as a statement it changes nothing."
    fix_summary = "A bare `x.to(device)` on a tensor (a no-op) becomes `x = x.to(device)`; on a module it is correct and left alone."
    verify_hint = "keep the moved copy: x = x.to(device) (Tensor.to is not in place)"
    why = """
`Module.to()` moves a module in place, so `model.to(device)` alone on a line is correct.
`Tensor.to()` is not in place: it returns a new tensor and leaves `x` where it was, so
`x.to(device)` as a statement is a no-op and `x` later meets the model's weights on another
device ("Expected all tensors to be on the same device"). The statement becomes an
assignment. devfix only rewrites names it knows are tensors (built by a torch function, or
yielded by a loop over a data loader) and bound in the same function, so the assignment
cannot turn a global into an unbound local; and only where the moved tensor then meets values
on the device and nothing on the CPU (a model that stays on the CPU worked only because the
move was discarded).
"""
    example = """
model = Net().to(device)
for inputs, labels in loader:
    inputs.to(device)
    labels.to(device)
    loss = criterion(model(inputs), labels)
"""
    use_instead = """
model = Net().to(device)
for inputs, labels in loader:
    inputs = inputs.to(device)
    labels = labels.to(device)
    loss = criterion(model(inputs), labels)
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = torch.nn.Linear(3, 1).to(device)\nx = torch.ones(3)\nx.to(device)\nprint(model(x))\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = torch.nn.Linear(3, 1).to(device)\nx = torch.ones(3)\nx = x.to(device)\nprint(model(x))\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(3, 1)\nmodel.to(device)\n",
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(3)\n\n\ndef f():\n    x.to(device)\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        seen = set()
        program = ctx.facts.program
        for statement in program.discarded_moves:
            if id(statement) not in seen and id(statement) not in program.kept_discards:
                seen.add(id(statement))
                yield self._fix(statement)

    def _fix(self, expr: cst.Expr) -> Finding:
        call = expr.value
        assert (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
        )
        name = call.func.value.value
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)
        message = f"`{name}.{call.func.attr.value}(...)` returns a moved copy that is discarded; `{name}` stays where it was; assigned back to `{name}`"
        return self.finding(expr, message, [Replace(expr, assign)])

"""DEV011 discarded-to: `x.to(device)` as a statement on a tensor does nothing; assign it."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext


class DiscardedTo(Rule):
    code = "DEV011"
    name = "discarded-to"
    summary = "`x.to(device)` on a tensor returns a copy; as a statement it changes nothing."
    why = """
`Module.to()` moves a module in place, so `model.to(device)` alone on a line is correct.
`Tensor.to()` is not in place: it returns a new tensor and leaves `x` where it was, so
`x.to(device)` as a statement is a no-op and `x` later meets the model's weights on another
device ("Expected all tensors to be on the same device"). The statement becomes an
assignment. devfix only rewrites names it knows are tensors (built by a torch factory in
this file, or yielded by a loop over a data loader) and bound in the same function, so
the assignment cannot turn a global into an unbound local.
"""
    example = """
for inputs, labels in loader:
    inputs.to(device)
    labels.to(device)
"""
    use_instead = """
for inputs, labels in loader:
    inputs = inputs.to(device)
    labels = labels.to(device)
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(3)\nx.to(device)\nprint(x.sum())\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(3)\nx = x.to(device)\nprint(x.sum())\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(3, 1)\nmodel.to(device)\n",
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(3)\n\n\ndef f():\n    x.to(device)\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for expr in facts.data.expr_statements:
            finding = self._check(ctx, expr)
            if finding is not None:
                yield finding

    def _check(self, ctx: RuleContext, expr: cst.Expr) -> Optional[Finding]:
        facts = ctx.facts
        call = expr.value
        if not isinstance(call, cst.Call) or not facts.loop_analysis.is_move_call(call):
            return None
        receiver = call.func.value  # type: ignore[attr-defined]
        if not isinstance(receiver, cst.Name):
            return None
        name = receiver.value
        scope = facts.function_scope_of(expr)
        if facts.binding_scope(facts.scope_of(expr), name) is not scope:
            return None  # assigning would make a global or enclosing variable local here
        if not facts.loop_analysis.is_tensor_name(name, expr, facts.batch_loops):
            return None
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)
        message = f"`{name}.{call.func.attr.value}(...)` returns a moved copy that is discarded; `{name}` stays where it was; assigned back to `{name}`"  # type: ignore[attr-defined]
        return self.finding(expr, message, [Replace(expr, assign)])

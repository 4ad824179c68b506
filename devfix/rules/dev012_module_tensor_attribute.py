"""DEV012 module-tensor-attribute: a plain tensor on a module becomes a non-persistent buffer."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.plan import Move
from devfix.analysis.scopes import dotted_name
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import grandparent

HINT = "register it in `__init__` with `self.register_buffer(name, tensor, persistent=False)`"


class ModuleTensorAttribute(Rule):
    code = "DEV012"
    name = "module-tensor-attribute"
    summary = "A plain tensor stored on a module in `__init__` does not move with `model.to(device)`."
    fix_summary = "A plain tensor stored on a module in `__init__` becomes a non-persistent buffer that moves with `model.to(device)`."
    verify_hint = 'make it a buffer so it moves with the model: self.register_buffer("name", t, persistent=False)'
    why = """
`model.to(device)` moves parameters and buffers, not plain tensor attributes. A causal mask,
a positional-encoding table, anchors or class weights kept as `self.x = torch....` stay on
the CPU and meet GPU activations in `forward`: "Expected all tensors to be on the same
device". Registered as a buffer they move with the module; `persistent=False` keeps them out
of `state_dict()`, so existing checkpoints load unchanged.
"""
    example = """
class CausalSelfAttention(nn.Module):
    def __init__(self, block_size):
        super().__init__()
        self.mask = torch.tril(torch.ones(block_size, block_size))
"""
    use_instead = """
class CausalSelfAttention(nn.Module):
    def __init__(self, block_size):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size)), persistent=False)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(3, 3)\n        self.scale = torch.ones(3)\n\n    def forward(self, x):\n        return self.fc(x) * self.scale\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            '        self.fc = nn.Linear(3, 3)\n        self.register_buffer("scale", torch.ones(3), persistent=False)\n\n    def forward(self, x):\n        return self.fc(x) * self.scale\n',
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(3))\n\n    def forward(self, x):\n        return x * self.scale\n",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scale = nn.Parameter(torch.ones(3))\n\n    def forward(self, x):\n        return x * self.scale\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for move in ctx.facts.plan.by_rule(self.code):
            if not _also_a_parameter(ctx, move):
                yield self._fix(ctx, move)

    def _fix(self, ctx: RuleContext, move: Move) -> Finding:
        facts = ctx.facts
        tree = facts.tree
        target = move.origin.node
        assign = grandparent(tree, target)
        method = tree.enclosing(target, cst.FunctionDef)
        klass = tree.class_of_method(method) if isinstance(method, cst.FunctionDef) else None
        owner = klass.name.value if klass is not None else "the module"
        self_name = tree.code(target.value) if isinstance(target, cst.Attribute) else "self"
        attr = move.origin.name or ""
        message = f"`{self_name}.{attr}` is a plain tensor attribute of `{owner}`: `.to(device)` leaves it on the CPU, where it meets the module's activations"
        if not move.fixable:
            return self.finding(target, f"{message}; not fixed: {move.reason}", hint=HINT)
        if not isinstance(assign, cst.Assign) or not self._replaceable(ctx, assign, method):
            return self.finding(target, message, hint=HINT)
        value = assign.value
        call = ctx.expression(
            f"{self_name}.register_buffer({facts.quote(attr)}, {facts.code(value)}, persistent=False)"
        )
        return self.finding(
            target, f"{message}; registered as a non-persistent buffer", [Replace(assign, cst.Expr(call))]
        )

    @staticmethod
    def _replaceable(ctx: RuleContext, assign: cst.Assign, method: cst.CSTNode | None) -> bool:
        """`self.x = <tensor>` alone on its line, after `super().__init__()` (register_buffer
        needs Module.__init__ to have run)."""
        tree = ctx.facts.tree
        if len(assign.targets) != 1 or method is None:
            return False
        line = tree.parent(assign)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return False
        for call in tree.data.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "__init__" and tree.is_inside(call, method)):
                continue
            receiver = func.value
            if (isinstance(receiver, cst.Call) and dotted_name(receiver.func) == "super") or call.args:
                return tree.order(call) < tree.order(assign)
        return False


_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _also_a_parameter(ctx: RuleContext, move: Move) -> bool:
    """The class assigns the attribute an `nn.Parameter` too (`if bias: self.bias =
    Parameter(...) else: self.bias = torch.zeros(...)`, pytorch-kaldi's quaternion layers): as a
    buffer it would leave the module's parameters, untrained and unsaved (spec DEV012)."""
    facts = ctx.facts
    tree = facts.tree
    target = move.origin.node
    method = tree.enclosing(target, cst.FunctionDef)
    klass = tree.class_of_method(method) if isinstance(method, cst.FunctionDef) else None
    if klass is None or not isinstance(target, cst.Attribute):
        return False
    for assign in facts.data.assigns:
        value = assign.value
        if not (isinstance(value, cst.Call) and tree.is_inside(assign, klass)):
            continue
        callee = facts.value(value.func)
        if callee is None or callee.qual not in _PARAMETERS:
            continue
        if any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == target.attr.value for t in assign.targets
        ):
            return True
    return False

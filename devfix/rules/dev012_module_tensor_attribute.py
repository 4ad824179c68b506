"""DEV012 module-tensor-attribute: a plain tensor on a module becomes a non-persistent buffer."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from devfix.analysis.tensors import AttributeWrite, ModuleClass, host_function, is_tensor_expr, method_name
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext

PARAMETER_CLASSES = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")


class ModuleTensorAttribute(Rule):
    code = "DEV012"
    name = "module-tensor-attribute"
    summary = "A plain tensor stored on a module in `__init__` does not move with `model.to(device)`."
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
            "        self.scale = torch.ones(3)\n\n    def forward(self, x):\n        return x * self.scale\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer(\"scale\", torch.ones(3), persistent=False)\n\n    def forward(self, x):\n        return x * self.scale\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(3))\n\n    def forward(self, x):\n        return x * self.scale\n",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.scale = nn.Parameter(torch.ones(3))\n\n    def forward(self, x):\n        return x * self.scale\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for info in ctx.facts.module_classes.values():
            for write in info.init_writes:
                finding = self._check_write(ctx, info, write)
                if finding is not None:
                    yield finding

    def _check_write(self, ctx: RuleContext, info: ModuleClass, write: AttributeWrite) -> Optional[Finding]:
        facts = ctx.facts
        value = write.value
        if write.assign is None or value is None or len(write.statement.body) != 1:
            return None
        if isinstance(value, cst.Call) and facts.qualname(value.func, at=value) in PARAMETER_CLASSES:
            return None
        if not is_tensor_expr(facts, value):
            return None
        if len(info.writes_of(write.attr)) != 1 or write.attr in info.buffers:
            return None  # reassigned somewhere (maybe to a non-tensor), or already a buffer
        if not self._used_on_device(ctx, info, write.attr):
            return None
        if info.super_init is None or facts.order(info.super_init) > facts.order(write.statement):
            return None  # register_buffer needs Module.__init__ to have run
        self_name = write.method.params.params[0].name.value
        call = ctx.expression(
            f"{self_name}.register_buffer({facts.quote(write.attr)}, {ctx.module.code_for_node(value)}, persistent=False)"
        )
        message = (
            f"`{self_name}.{write.attr}` is a plain tensor attribute of `{info.name}`: `.to(device)` does not move it; "
            "registered as a non-persistent buffer"
        )
        return self.finding(write.assign, message, [Replace(write.assign, cst.Expr(call))])

    def _used_on_device(self, ctx: RuleContext, info: ModuleClass, attr: str) -> bool:
        """Read outside `__init__`, and never handed to NumPy or moved by hand at each use."""
        facts = ctx.facts
        reads = [read for read in info.reads.get(attr, []) if not facts.is_inside(read, info.methods["__init__"])]
        if not reads:
            return False
        moved = 0
        for read in reads:
            parent = facts.parent(read)
            if isinstance(parent, cst.Attribute):
                outer = facts.parent(parent)
                if method_name(outer) == "numpy":
                    return False
                if method_name(outer) in ("to", "cuda", "type_as"):
                    moved += 1
            if isinstance(parent, cst.Arg):
                outer = facts.parent(parent)
                if isinstance(outer, cst.Call) and host_function(facts, outer):
                    return False
        return moved < len(reads)

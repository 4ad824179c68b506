"""DEV007 forward-created-tensor: factories in module methods get the input's device."""

from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from devfix.analysis.plan import Move
from devfix.analysis.values import Kind, Place
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword

NO_DEVICE_HINT = "pass `device=` of an input tensor, or register the tensor as a buffer in `__init__`"


class ForwardCreatedTensor(Rule):
    code = "DEV007"
    name = "forward-created-tensor"
    summary = "A tensor factory without `device=` inside a module's method creates a CPU tensor that meets GPU activations."
    why = """
`torch.zeros(...)` and the other factories allocate on the CPU unless told otherwise. Inside
`forward` (or `init_hidden`) of a module that runs on the GPU, the new tensor meets GPU
activations: "Expected all tensors to be on the same device", or for an LSTM "Input and
hidden tensors are not at the same device". `device=x.device` (the method's first tensor
argument) creates it wherever the input is; without one, the module's own parameters say
where it lives. Constant tensors that belong to the module are better registered once as
buffers in `__init__` (`self.register_buffer(...)`), which move with `model.to(device)`.
"""
    example = """
def forward(self, x):
    h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size)
    out, _ = self.rnn(x, h0)
"""
    use_instead = """
def forward(self, x):
    h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size, device=x.device)
    out, _ = self.rnn(x, h0)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x) + torch.ones(x.size(0), 4)\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.fc = nn.Linear(4, 4)\n\n    def forward(self, x):\n        return self.fc(x) + torch.ones(x.size(0), 4, device=x.device)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.rnn = nn.GRU(4, 8)\n\n    def forward(self, x):\n        return self.rnn(x, self.init_hidden(x.size(1)))[0]\n\n"
            "    def init_hidden(self, bsz):\n        return torch.zeros(1, bsz, 8)\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.rnn = nn.GRU(4, 8)\n\n    def forward(self, x):\n        return self.rnn(x, self.init_hidden(x.size(1)))[0]\n\n"
            "    def init_hidden(self, bsz):\n        return torch.zeros(1, bsz, 8, device=next(self.parameters()).device)\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.zeros_like(x) + torch.ones(x.size(0), device=x.device)\n",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('w', torch.ones(3))\n",
        "import math\nimport torch\nfrom torch import nn\n\nclass GELU(nn.Module):\n    def forward(self, x):\n"
        "        return 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / math.pi)) * x))\n",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(3, 3)\n        self.register_buffer('idx', torch.zeros(3))\n\n    def forward(self, x):\n"
        "        self.idx.copy_(torch.tensor([1.0, 2.0, 3.0]))\n        return self.fc(x)\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for move in ctx.facts.plan.by_rule(self.code):
            yield self._fix(ctx, move)

    def _fix(self, ctx: RuleContext, move: Move) -> Finding:
        facts = ctx.facts
        call = move.origin.node
        method = facts.tree.enclosing(call, cst.FunctionDef)
        klass = facts.tree.class_of_method(method) if isinstance(method, cst.FunctionDef) else None
        where = f"`{klass.name.value}.{method.name.value}`" if klass is not None and method is not None else "a module's method"
        message = f"`{facts.code(call.func)}(...)` in {where} has no `device=`: it is made on the CPU and meets tensors on the module's device"
        if not move.fixable:
            return self.finding(call, f"{message}; not fixed: {move.reason}", hint=NO_DEVICE_HINT)
        device = self._device(ctx, move, call)
        if device is None:
            return self.finding(call, message, hint=NO_DEVICE_HINT)
        new = add_keyword(call, "device", ctx.expression(device))
        return self.finding(call, f"{message}; made on `{device}`", [Replace(call, new)])

    def _device(self, ctx: RuleContext, move: Move, call: cst.Call) -> Optional[str]:
        """`<t>.device` of the method's first tensor argument (one shown to meet the module's
        weights), else of a tensor the factory's result meets, bound before it; else a buffer's."""
        facts = ctx.facts
        tree = facts.tree
        method = tree.enclosing(call, cst.FunctionDef)
        if method is None:
            return None
        info = facts.program.functions.get(id(method))
        candidates: List[str] = []
        if info is not None:  # the method's first tensor argument, as the spec says
            candidates.extend(p.name.value for p in info.parameters() if p.name.value in info.module_inputs)
        for meeting in move.meetings:
            for node, value in meeting.operands:
                if value.place is Place.DEVICE and value.kind is Kind.TENSOR and isinstance(node, cst.Name):
                    candidates.append(node.value)
        scope = tree.function_scope_of(call)
        position = tree.order(call)
        for name in candidates:
            bindings = scope.bindings.get(name, [])
            if any(b.kind == "param" or b.order < position and not tree.is_inside(call, b.node) for b in bindings):
                return f"{name}.device"
        if info is not None and info.self_name is not None and info.klass is not None:
            for name in sorted(info.klass.buffers):
                return f"{info.self_name}.{name}.device"
            if _owns_parameters(info.klass):
                return f"next({info.self_name}.parameters()).device"
        return None


def _owns_parameters(klass) -> bool:
    """`next(self.parameters())` cannot raise: the module holds a layer or a parameter."""
    for value in klass.attrs.values():
        if value.kind is Kind.MODULE and not value.neutral or value.kind is Kind.TENSOR and value.grad:
            return True
    return any(_owns_parameters(base) for base in klass.bases)

"""DEV007 forward-created-tensor: factories in module methods get the input's device."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst
from libcst.helpers import ensure_type

from devfix.analysis import torch_api as api
from devfix.analysis.plan import Move
from devfix.analysis.values import Kind, Place
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword, expression, move_to

if TYPE_CHECKING:
    from devfix.analysis.facts import FileFacts

NO_DEVICE_HINT = "pass `device=` of an input tensor, or register the tensor as a buffer in `__init__`"


class ForwardCreatedTensor(Rule):
    code = "DEV007"
    name = "forward-created-tensor"
    summary = (
        "A tensor factory without `device=` inside a module's method creates a CPU tensor that meets GPU activations."
    )
    fix_summary = "Factories without `device=` in a module's methods (LSTM `h0`/`c0`, masks, positions) get `device=x.device` of the first tensor argument, or of the module's parameters."
    verify_hint = "create it on the input's device: torch.zeros(..., device=x.device)"
    why = """
`torch.zeros(...)` and the other factories allocate on the CPU unless told otherwise. Inside
`forward` (or `init_hidden`) of a module that runs on the GPU, the new tensor meets GPU
activations: "Expected all tensors to be on the same device", or for an LSTM "Input and
hidden tensors are not at the same device". `device=x.device` (the method's first tensor
argument) creates it wherever the input is; without one, the module's own parameters say
where it lives. Constant tensors that belong to the module are better registered once as
buffers in `__init__` (`self.register_buffer(...)`), which move with `model.to(device)`.
A CPU buffer the method fills by a plain index (`losses[i] = nll`) is reported when it is
returned or meets other tensors; kept inside (`losses.mean()`, `.numpy()`), it is fine: a
plain index copies across devices.
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
        where = (
            f"`{klass.name.value}.{method.name.value}`"
            if klass is not None and isinstance(method, cst.FunctionDef)
            else "a module's method"
        )
        made = f"`{facts.code(call.func)}(...)`" if isinstance(call, cst.Call) else f"`{facts.code(call, 40)}`"
        message = f"{made} in {where} is made on the CPU and meets tensors on the module's device"
        if not move.fixable:
            return self.finding(call, f"{message}; not fixed: {move.reason}", hint=NO_DEVICE_HINT)
        device = facts.devices.relative(call, move.meetings)
        if device is None:
            return self.finding(call, message, hint=NO_DEVICE_HINT)
        if move.origin.kind == "host" and _typed_copy_of_a_tensor(facts, call):
            return self.finding(
                call,
                f"{message}; not fixed: a legacy constructor takes CPU data only, so it raises itself where "
                "its tensor argument is on the GPU",
                hint="convert the tensor itself (`mask.bool()`, `ids.long()`): it stays on its own device",
            )
        if move.origin.kind == "host":  # `torch.LongTensor([...])`, `torch.from_numpy(a)`: moved as made
            return self.finding(
                call,
                f"{message}; moved to `{device}` where it is made",
                [Replace(call, move_to(expression(call), ctx.expression(device)))],
            )
        new = add_keyword(ensure_type(call, cst.Call), "device", ctx.expression(device))
        return self.finding(call, f"{message}; made on `{device}`", [Replace(call, new)])


def _typed_copy_of_a_tensor(facts: FileFacts, call: cst.CSTNode) -> bool:
    """`torch.BoolTensor(x == 0)` of a tensor the flow cannot place on the CPU (torch-rechub's
    SASRec, whose trainer moves `x`): on a GPU the constructor raises "expected a CPU tensor"
    before any move could help, so a move appended to it is no fix."""
    if not isinstance(call, cst.Call) or facts.tree.qualname(call.func, call) not in api.CPU_TENSOR_TYPES:
        return False
    for arg in call.args:
        value = facts.program.values.get(id(arg.value))
        if arg.keyword is None and value is not None and value.kind is Kind.TENSOR and value.place is not Place.CPU:
            return True
    return False

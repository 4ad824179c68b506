"""DEV007 forward-created-tensor: factories in module methods get the input's device."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from devfix.analysis.tensors import ModuleClass, factory_name, self_name_of, surely_has_parameters
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import add_keyword, keyword

# Calls whose tensor arguments belong to the module itself (moved by `.to()`) or to the CPU.
OWNING_CALLS = {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.utils.rnn.pack_padded_sequence"}


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
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.ones(x.size(0))\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.ones(x.size(0), device=x.device)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.rnn = nn.GRU(4, 8)\n\n    def init_hidden(self, bsz):\n        return torch.zeros(1, bsz, 8)\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.rnn = nn.GRU(4, 8)\n\n    def init_hidden(self, bsz):\n        return torch.zeros(1, bsz, 8, device=next(self.parameters()).device)\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.zeros_like(x) + torch.ones(x.size(0), device=x.device)\n",
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('w', torch.ones(3))\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        methods = {}
        for info in facts.module_classes.values():
            for name, method in info.methods.items():
                if name != "__init__" and self_name_of(method) is not None:
                    methods[id(method)] = (info, method)
        if not methods:
            return
        for call in facts.data.calls:
            scope = facts.function_scope_of(call)
            owner = methods.get(id(scope.node))
            if owner is None or factory_name(facts, call) is None:
                continue
            finding = self._check_factory(ctx, call, *owner)
            if finding is not None:
                yield finding

    def _check_factory(self, ctx: RuleContext, call: cst.Call, info: ModuleClass, method: cst.FunctionDef) -> Optional[Finding]:
        facts = ctx.facts
        if keyword(call, "device") is not None or keyword(call, "out") is not None or any(arg.star for arg in call.args):
            return None
        if facts.moved_on_creation(call):
            return None  # `torch.zeros(...).to(device)`: placed at once
        if self._owned_or_host_side(ctx, call, method) or self._callers_move_result(ctx, info, method):
            return None
        device = self._device_code(ctx, call, info, method)
        factory = facts.qualname(call.func, at=call)
        message = f"`{factory}(...)` in `{info.name}.{method.name.value}` has no `device=`: it is created on the CPU"
        if device is None:
            return self.finding(call, message, hint="pass `device=` of an input tensor, or register the tensor as a buffer in `__init__`")
        return self.finding(call, f"{message}; created on `{device}`", [Replace(call, add_keyword(call, "device", ctx.expression(device)))])

    def _owned_or_host_side(self, ctx: RuleContext, call: cst.Call, method: cst.FunctionDef) -> bool:
        """Inside `nn.Parameter(...)`, `register_buffer(...)`, pack_padded_sequence's lengths."""
        facts = ctx.facts
        for ancestor in facts.ancestors(call):
            if ancestor is method:
                return False
            if isinstance(ancestor, cst.Call) and ancestor is not call:
                qual = facts.qualname(ancestor.func, at=ancestor) or ""
                if qual in OWNING_CALLS:
                    return True
                if isinstance(ancestor.func, cst.Attribute) and ancestor.func.attr.value in ("register_buffer", "numpy", "tolist"):
                    return True
        return False

    def _callers_move_result(self, ctx: RuleContext, info: ModuleClass, method: cst.FunctionDef) -> bool:
        """A helper whose every call moves what it returns (`self._make_mask(n).to(device)`)."""
        facts = ctx.facts
        calls = 0
        for read in info.reads.get(method.name.value, []):
            call = facts.parent(read)
            if not isinstance(call, cst.Call) or call.func is not read:
                return False
            attribute = facts.parent(call)
            outer = facts.parent(attribute) if isinstance(attribute, cst.Attribute) else None
            if not (isinstance(outer, cst.Call) and outer.func is attribute and attribute.attr.value in ("to", "cuda")):
                return False
            calls += 1
        return calls > 0

    def _device_code(self, ctx: RuleContext, call: cst.Call, info: ModuleClass, method: cst.FunctionDef) -> Optional[str]:
        """`x.device` for the first tensor argument; else the method's device parameter or
        `self.device`; else the module's own parameters or a buffer."""
        facts = ctx.facts
        tensor_names = info.tensor_names.get(id(method), set())
        self_name = method.params.params[0].name.value
        for param in method.params.params[1:]:
            if param.name.value in tensor_names:
                return f"{param.name.value}.device"
        found = facts.device_at(call)
        if found is not None and found.kind in ("parameter", "attribute") and facts.binding_scope(facts.scope_of(call), found.code.split(".")[0]) is facts.scope_of(call):
            return found.code
        if surely_has_parameters(facts, info):
            return f"next({self_name}.parameters()).device"
        if info.buffers:
            return f"{self_name}.{info.buffers[0]}.device"
        return None

"""DEV009 host-conversion: `.numpy()` on a device tensor becomes `.detach().cpu().numpy()`."""

from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from devfix.analysis.tensors import host_function, method_name
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import method_call


class HostConversion(Rule):
    code = "DEV009"
    name = "host-conversion"
    needs_placement = True
    summary = "`.numpy()` on a tensor that may live on the GPU (or require grad) fails; go through `.detach().cpu()`."
    why = """
NumPy only sees host memory: `.numpy()` on a CUDA tensor raises "can't convert cuda:0 device
type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first", and on a
tensor that requires grad "Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead". Model outputs, moved batches and anything computed from
them are such tensors. The same holds for tensors handed to NumPy / scikit-learn functions
(`np.mean(t)`, `accuracy_score(y, preds)`). `.item()` and `.tolist()` work everywhere.
"""
    example = """
outputs = model(inputs.to(device))
preds = outputs.argmax(1).numpy()
probs = torch.softmax(outputs, 1).cpu().numpy()
"""
    use_instead = """
outputs = model(inputs.to(device))
preds = outputs.argmax(1).detach().cpu().numpy()
probs = torch.softmax(outputs, 1).detach().cpu().numpy()
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(2, 2).to(device)\nout = model(torch.ones(1, 2).to(device))\nprint(out.numpy())\n",
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(2, 2).to(device)\nout = model(torch.ones(1, 2).to(device))\nprint(out.detach().cpu().numpy())\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(2, 2).to(device)\nout = model(torch.ones(1, 2).to(device))\n"
        "print(out.detach().cpu().numpy(), out.sum().item(), out.tolist())\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for call in facts.data.calls:
            if method_name(call) == "numpy" and not call.args:
                finding = self._check_numpy(ctx, call)
            elif host_function(facts, call):
                finding = self._check_host_call(ctx, call)
            else:
                finding = None
            if finding is not None:
                yield finding

    def _check_numpy(self, ctx: RuleContext, call: cst.Call) -> Optional[Finding]:
        flow = ctx.facts.tensor_flow
        receiver = call.func.value  # type: ignore[attr-defined]
        text = _code(ctx, receiver)
        if method_name(receiver) == "cpu" and not receiver.args:  # type: ignore[attr-defined]
            inner = receiver.func.value  # type: ignore[attr-defined]
            if method_name(inner) == "detach" or not flow.requires_grad(inner):
                return None
            new = method_call(method_call(method_call(inner, "detach"), "cpu"), "numpy")
            message = f"`{text}.numpy()`: `{_code(ctx, inner)}` requires grad; detach it first"
            return self.finding(call, message, [Replace(call, new.with_changes(lpar=call.lpar, rpar=call.rpar))])
        if not flow.on_device(receiver):
            return None
        base = receiver.func.value if method_name(receiver) == "detach" and not receiver.args else receiver  # type: ignore[attr-defined]
        new = method_call(method_call(method_call(base, "detach"), "cpu"), "numpy")
        message = f"`{text}.numpy()` on a tensor that may be on the GPU; copy it to the host with `.detach().cpu()` first"
        return self.finding(call, message, [Replace(call, new.with_changes(lpar=call.lpar, rpar=call.rpar))])

    def _check_host_call(self, ctx: RuleContext, call: cst.Call) -> Optional[Finding]:
        facts = ctx.facts
        flow = facts.tensor_flow
        on_device = [arg for arg in call.args if not arg.star and flow.on_device(arg.value)]
        if not on_device:
            return None
        function = host_function(facts, call)
        names = ", ".join(f"`{_code(ctx, arg.value)}`" for arg in on_device)
        verb = "is" if len(on_device) == 1 else "are"
        message = f"{names} may be on the GPU and {verb} passed to `{function}`, which needs host (NumPy) data"
        if not all(isinstance(arg.value, cst.Name) for arg in on_device):
            return self.finding(call, message, hint="convert with `.detach().cpu().numpy()` first")
        edits: List[Replace] = [
            Replace(arg.value, method_call(method_call(method_call(arg.value, "detach"), "cpu"), "numpy")) for arg in on_device
        ]
        return self.finding(call, f"{message}; converted with `.detach().cpu().numpy()`", edits)


def _code(ctx: RuleContext, node: cst.CSTNode) -> str:
    text = ctx.module.code_for_node(node)
    return text if len(text) <= 40 else text[:37] + "..."

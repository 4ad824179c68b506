"""DEV009 host-conversion: `.numpy()` on a device tensor becomes `.detach().cpu().numpy()`."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.reach import scope_owner
from devfix.analysis.values import Kind, Meeting, Place, Value
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import expression, method_call


class HostConversion(Rule):
    code = "DEV009"
    name = "host-conversion"
    summary = "`.numpy()` on a tensor that may live on the GPU (or require grad) fails; go through `.detach().cpu()`."
    fix_summary = "`.numpy()` on a tensor that may be on the GPU becomes `.detach().cpu().numpy()`; `.cpu().numpy()` on a tensor that requires grad gets `.detach()`."
    verify_hint = "copy to the host first: t.detach().cpu().numpy()"
    why = """
NumPy only sees host memory: `.numpy()` on a CUDA tensor raises "can't convert cuda:0 device
type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first", and on a
tensor that requires grad "Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead". Model outputs, moved batches and anything computed from
them are such tensors. The same holds for tensors handed to NumPy / scikit-learn functions
(`np.mean(t)`, `accuracy_score(y, preds)`). `.item()` and `.tolist()` work everywhere.
The `lengths` of `pack_padded_sequence` must be a CPU tensor too: lengths moved to the GPU
get `.cpu()`. devfix reports these only for values it has seen put on the device; a tensor
whose device it cannot know is left alone. A missing `.detach()` before `.cpu().numpy()` is
reported only in a function that runs a backward pass itself: elsewhere grad mode is the
caller's (an evaluation under `torch.no_grad()`, a detector's integer labels), and code that
works as written converts where it is off.
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
        training = _training_scopes(ctx)
        for meeting in sorted(facts.program.meetings.values(), key=lambda m: facts.tree.order(m.node)):
            if meeting.kind != "host":
                continue
            if meeting.detail == "numpy":
                finding = self._check_numpy(ctx, meeting, training)
            elif meeting.detail == "pack_padded_sequence lengths":
                finding = self._check_lengths(ctx, meeting)
            elif meeting.detail and "." in meeting.detail:
                finding = self._check_host_call(ctx, meeting)
            else:
                finding = None
            if finding is not None:
                yield finding

    def _check_numpy(self, ctx: RuleContext, meeting: Meeting, training: set[int]) -> Finding | None:
        call = meeting.node
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        receiver = call.func.value
        value = meeting.operands[0][1]
        text = _code(ctx, receiver)
        if (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "cpu"
            and not receiver.args
        ):
            inner = receiver.func.value
            inner_value = ctx.facts.value(inner)
            if inner_value is None or not inner_value.grad or _is_detach(inner):
                return None
            if id(scope_owner(ctx.facts.tree, call)) not in training:
                return None  # grad mode is the caller's: a detection's int labels, an eval under no_grad
            new = method_call(method_call(method_call(inner, "detach"), "cpu"), "numpy")
            message = f"`{text}.numpy()`: `{_code(ctx, inner)}` requires grad; detach it first"
            return self.finding(call, message, [Replace(call, new.with_changes(lpar=call.lpar, rpar=call.rpar))])
        if value.place is not Place.DEVICE:
            return None
        message = f"`{text}.numpy()` on a tensor on the device"
        if _meets_a_tensor(ctx, call):
            # `rhos * (td - v).numpy()`: a host array and a device tensor cannot be combined
            # either, so converting only moves the crash to the operator
            return self.finding(
                call,
                f"{message}, and the NumPy result is combined with what may be a tensor",
                hint="keep the tensor (drop `.numpy()`) or convert both operands",
            )
        detached = _detached(receiver)
        base = detached if detached is not None else receiver
        new = method_call(method_call(method_call(base, "detach"), "cpu"), "numpy")
        message += "; copy it to the host with `.detach().cpu()` first"
        return self.finding(call, message, [Replace(call, new.with_changes(lpar=call.lpar, rpar=call.rpar))])

    def _check_host_call(self, ctx: RuleContext, meeting: Meeting) -> Finding | None:
        on_device = [(node, value) for node, value in meeting.operands if _on_device(value)]
        if not on_device:
            return None
        names = ", ".join(f"`{_code(ctx, node)}`" for node, _ in on_device)
        verb = "is" if len(on_device) == 1 else "are"
        message = f"{names} {verb} on the device and passed to `{meeting.detail}`, which needs host (NumPy) data"
        plain = [node for node, _ in on_device if isinstance(node, cst.Name)]
        if len(plain) != len(on_device) or any(_picked_by_position(ctx, node) for node in plain):
            return self.finding(meeting.node, message, hint="convert with `.detach().cpu().numpy()` first")
        edits: list[Replace] = [
            Replace(node, method_call(method_call(method_call(node, "detach"), "cpu"), "numpy")) for node in plain
        ]
        return self.finding(meeting.node, f"{message}; converted with `.detach().cpu().numpy()`", edits)

    def _check_lengths(self, ctx: RuleContext, meeting: Meeting) -> Finding | None:
        node, value = meeting.operands[0]
        if value.place is not Place.DEVICE:
            return None
        if _unchanged_parameter(ctx, node):
            # a method's parameter handed on as it came (`self.encoder(x, lengths)`): it may
            # well be a list or a NumPy array, which has no `.cpu()` (Tacotron); the result of a
            # torch operation on it (`torch.sort(lengths)`) is a tensor
            return None
        message = f"`{_code(ctx, node)}` is on the device, but `pack_padded_sequence` needs its lengths on the CPU"
        return self.finding(
            node, f"{message}; passed with `.cpu()`", [Replace(node, method_call(expression(node), "cpu"))]
        )


def _training_scopes(ctx: RuleContext) -> set[int]:
    """The functions (and the module's own code, by its node's id) that call `.backward()`.

    `.cpu().numpy()` on a tensor that requires grad fails on every machine, so code that
    works and converts so does it where grad is off: under a caller's `torch.no_grad()`
    (often in another file), on integer outputs (a detector's labels), on a distribution's
    samples. Only a scope that runs a backward pass itself shows grad mode to be on."""
    return {
        id(scope_owner(ctx.facts.tree, call))
        for call in ctx.facts.tree.data.calls
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward"
    }


def _unchanged_parameter(ctx: RuleContext, node: cst.CSTNode) -> bool:
    """`node` names a parameter of its function that nothing in the function rebinds."""
    if not isinstance(node, cst.Name):
        return False
    bindings = ctx.facts.tree.function_scope_of(node).bindings.get(node.value, [])
    return bool(bindings) and all(binding.kind == "param" for binding in bindings)


def _picked_by_position(ctx: RuleContext, name: cst.Name) -> bool:
    """`demo = output[1]`: the name was last bound to an item picked by a constant index, which
    may be any item of a model's output tuple (MORAN's debug image, a NumPy array, where the
    flow saw a tensor): `.detach()` on it would raise, so the finding is reported unfixed."""
    bindings = ctx.facts.tree.function_scope_of(name).bindings.get(name.value, [])
    position = ctx.facts.tree.order(name)
    before = [b for b in bindings if b.order < position]
    if not before:
        return False
    value = before[-1].value
    return (
        isinstance(value, cst.Subscript)
        and len(value.slice) == 1
        and isinstance(value.slice[0].slice, cst.Index)
        and isinstance(value.slice[0].slice.value, cst.Integer)
    )


def _meets_a_tensor(ctx: RuleContext, call: cst.Call) -> bool:
    """The `.numpy()` result is an operand of arithmetic whose other operand may be a tensor
    (anything not known to be a host value: a number, a NumPy array)."""
    parent = ctx.facts.tree.parent(call)
    if not isinstance(parent, cst.BinaryOperation):
        return False
    other = parent.right if parent.left is call else parent.left
    value = ctx.facts.value(other)
    return value is None or value.kind is not Kind.HOST


def _on_device(value: Value) -> bool:
    return value.kind is Kind.TENSOR and value.place is Place.DEVICE


def _is_detach(node: cst.CSTNode) -> bool:
    return _detached(node) is not None


def _detached(node: cst.CSTNode) -> cst.BaseExpression | None:
    """`x` of `x.detach()`; None for anything else."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "detach"
        and not node.args
    ):
        return node.func.value
    return None


def _code(ctx: RuleContext, node: cst.CSTNode) -> str:
    return ctx.facts.code(node, 40)

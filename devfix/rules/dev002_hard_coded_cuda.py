"""DEV002 hard-coded-cuda: `.cuda()`, `.to("cuda")`, `device="cuda"` use the device variable."""

from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from devfix.analysis.facts import DeviceRef
from devfix.edits import Replace, ReplaceStatement
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import is_cuda_string, keyword, move_to, replace_arg_value

IS_AVAILABLE = ("torch.cuda.is_available",)
NO_DEVICE_HINT = "declare a device (`device = torch.device(...)`) and use it instead"


class HardCodedCuda(Rule):
    code = "DEV002"
    name = "hard-coded-cuda"
    summary = "`.cuda()`, `.to(\"cuda\")` and `device=\"cuda\"` crash on a CPU-only machine; use the device variable."
    why = """
A hard-coded `.cuda()` or `"cuda"` makes the script die on a machine without a GPU
("Torch not compiled with CUDA enabled" / "No CUDA GPUs are available"), and ignores the
device the rest of the program chose. Routing every placement through one device variable
keeps the script runnable everywhere and consistent. A `if torch.cuda.is_available():`
block that only moves things becomes the unconditional move: the device variable already
says "cuda if available".
"""
    example = """
model = Net().cuda()
x = torch.zeros(8, device="cuda")
if torch.cuda.is_available():
    criterion.cuda()
"""
    use_instead = """
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(device)
x = torch.zeros(8, device=device)
criterion.to(device)
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).cuda()\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        ),
        Example(
            "import torch\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.zeros(3, device='cuda:0')\n",
            "import torch\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.zeros(3, device=dev)\n",
        ),
    )
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        "import torch\nx = torch.ones(2).to('cpu')\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        collapsed: List[cst.If] = []
        for node in facts.data.ifs:
            finding = self._collapse_if(ctx, node)
            if finding is not None:
                collapsed.append(node)
                yield finding
        for call in facts.data.calls:
            if any(facts.is_inside(call, block) for block in collapsed) or facts.under_gpu_guard(call):
                continue
            finding = self._check_call(ctx, call)
            if finding is not None:
                yield finding

    # -- calls ---------------------------------------------------------------------------
    def _check_call(self, ctx: RuleContext, call: cst.Call) -> Optional[Finding]:
        facts = ctx.facts
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and self._is_tensor_cuda_call(ctx, call):
            if self._inside_cuda_method(ctx, call):
                return None  # implements `.cuda()` itself (like `nn.Module.cuda`): CUDA is its contract
            optional = self._none_default_device(ctx, call)
            if optional is not None:
                return self.finding(
                    call,
                    f"`{_code(ctx, func.value)}.cuda({optional})` hard-codes CUDA, but `{optional}` defaults to None "
                    "(the current CUDA device), which `.to()` would ignore",
                    hint="pass a torch.device and use `.to(...)`, by hand",
                )
            return self._fix(ctx, call, f"`{_code(ctx, func.value)}.cuda()` hard-codes CUDA", lambda dev: self._cuda_to_to(ctx, call, dev))
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            for arg in call.args:
                if (arg.keyword is None or arg.keyword.value == "device") and self._is_cuda_device(ctx, arg.value):
                    return self._fix(
                        ctx, call, f"`{_code(ctx, func.value)}.to({_code(ctx, arg.value)})` hard-codes CUDA",
                        lambda dev, arg=arg: replace_arg_value(call, arg, ctx.expression(dev.code)),
                    )
                break
        qual = facts.qualname(func, at=call) or ""
        for name in ("device", "map_location"):
            arg = keyword(call, name)
            if arg is None or not self._is_cuda_device(ctx, arg.value):
                continue
            if name == "map_location" and qual != "torch.load":
                continue
            if name == "device" and not (qual.startswith("torch.") or _is_tensor_method(func)):
                continue
            return self._fix(
                ctx, call, f"`{name}={_code(ctx, arg.value)}` hard-codes CUDA",
                lambda dev, arg=arg: replace_arg_value(call, arg, ctx.expression(dev.code)),
            )
        return None

    def _inside_cuda_method(self, ctx: RuleContext, call: cst.Call) -> bool:
        function = ctx.facts.enclosing(call, cst.FunctionDef)
        return function is not None and function.name.value == "cuda"

    def _none_default_device(self, ctx: RuleContext, call: cst.Call) -> Optional[str]:
        """The name in `x.cuda(name)` when `name` is a parameter defaulting to None.

        `x.cuda(None)` moves to the current CUDA device, `x.to(None)` does nothing: rewriting
        it would silently stop moving the tensor.
        """
        args = [arg for arg in call.args if arg.keyword is None or arg.keyword.value == "device"]
        if not args or not isinstance(args[0].value, cst.Name):
            return None
        name = args[0].value.value
        for binding in ctx.facts.bindings_at(name, call) or ():
            node = binding.node
            if binding.kind == "param" and isinstance(node, cst.Param) and isinstance(node.default, cst.Name) and node.default.value == "None":
                return name
        return None

    def _fix(self, ctx: RuleContext, call: cst.Call, message: str, build) -> Finding:
        device = ctx.facts.need_device(call, self.code)
        if device is None:
            return self.finding(call, f"{message}; no device variable can be declared here", hint=NO_DEVICE_HINT)
        return self.finding(call, f"{message}; use `{device.code}`", [Replace(call, build(device))])

    def _is_tensor_cuda_call(self, ctx: RuleContext, call: cst.Call) -> bool:
        """`x.cuda()`, `x.cuda(0)`, `x.cuda(non_blocking=True)` — not `torch.cuda` itself."""
        receiver = call.func.value  # type: ignore[attr-defined]
        qual = ctx.facts.qualname(receiver, at=call)
        if qual is not None:
            return False  # a module (`torch.cuda`), not a tensor or model
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if positional and not isinstance(positional[0].value, cst.Integer):
            return False  # `.cuda(args.gpu)`, `.cuda(rank)`: a device index chosen on purpose
        return len(positional) <= 1 and keywords <= {"non_blocking", "memory_format"}

    def _cuda_to_to(self, ctx: RuleContext, call: cst.Call, device: DeviceRef) -> cst.Call:
        non_blocking = keyword(call, "non_blocking")
        new = move_to(call.func.value, ctx.expression(device.code))  # type: ignore[attr-defined]
        if non_blocking is not None:
            first = new.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            new = new.with_changes(args=[first, non_blocking.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        return new.with_changes(lpar=call.lpar, rpar=call.rpar)

    def _is_cuda_device(self, ctx: RuleContext, expr: cst.BaseExpression) -> bool:
        if is_cuda_string(expr):
            return True
        if isinstance(expr, cst.Call) and ctx.facts.qualname(expr.func, at=expr) == "torch.device":
            positional = [arg for arg in expr.args if arg.keyword is None]
            return len(positional) == 1 and is_cuda_string(positional[0].value)
        return False

    # -- `if torch.cuda.is_available(): model.cuda()` ---------------------------------------
    def _collapse_if(self, ctx: RuleContext, node: cst.If) -> Optional[Finding]:
        if not self._tests_cuda(ctx, node.test):
            return None
        if not isinstance(ctx.facts.parent(node), (cst.IndentedBlock, cst.Module)):
            return None  # an `elif` branch: collapsing it would change the chain
        body = _simple_statements(node.body)
        if body is None or not body or not all(self._is_cuda_move(ctx, stmt) for stmt in body):
            return None
        if node.orelse is not None:
            other = _simple_statements(node.orelse.body) if isinstance(node.orelse, cst.Else) else None
            if other is None or not all(self._is_cpu_move_or_pass(ctx, stmt) for stmt in other):
                return None
        device = ctx.facts.need_device(node, self.code)
        message = f"`if {_code(ctx, node.test)}:` only moves things to CUDA"
        if device is None:
            return self.finding(node, f"{message}; no device variable can be declared here", hint=NO_DEVICE_HINT)
        moved = [self._rewrite_move(ctx, stmt, device) for stmt in body]
        moved[0] = moved[0].with_changes(leading_lines=node.leading_lines)
        return self.finding(node, f"{message}; move unconditionally with `{device.code}`", [ReplaceStatement(node, moved)])

    def _tests_cuda(self, ctx: RuleContext, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.Call) and not test.args:
            return ctx.facts.qualname(test.func, at=test) in IS_AVAILABLE
        if isinstance(test, cst.Name):
            bindings = ctx.facts.bindings_at(test.value, test)
            return bool(bindings) and len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None and self._tests_cuda(ctx, bindings[0].value)
        return False

    def _move_call(self, stmt: cst.SimpleStatementLine) -> Optional[cst.Call]:
        if len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
            return value
        return None

    def _is_cuda_move(self, ctx: RuleContext, stmt: cst.SimpleStatementLine) -> bool:
        call = self._move_call(stmt)
        if call is None:
            return False
        attr = call.func.attr.value  # type: ignore[attr-defined]
        if attr == "cuda":
            return self._is_tensor_cuda_call(ctx, call)
        return attr == "to" and bool(call.args) and self._is_cuda_device(ctx, call.args[0].value)

    def _is_cpu_move_or_pass(self, ctx: RuleContext, stmt: cst.SimpleStatementLine) -> bool:
        if len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Pass):
            return True
        call = self._move_call(stmt)
        return call is not None and call.func.attr.value == "cpu" and not call.args  # type: ignore[attr-defined]

    def _rewrite_move(self, ctx: RuleContext, stmt: cst.SimpleStatementLine, device: DeviceRef) -> cst.SimpleStatementLine:
        call = self._move_call(stmt)
        assert call is not None
        if call.func.attr.value == "cuda":  # type: ignore[attr-defined]
            new_call = self._cuda_to_to(ctx, call, device)
        else:
            new_call = replace_arg_value(call, call.args[0], ctx.expression(device.code))
        small = stmt.body[0]
        return stmt.with_changes(body=[small.with_changes(value=new_call)])


def _simple_statements(block: cst.BaseSuite) -> Optional[List[cst.SimpleStatementLine]]:
    if isinstance(block, cst.IndentedBlock) and all(isinstance(s, cst.SimpleStatementLine) for s in block.body):
        return list(block.body)  # type: ignore[arg-type]
    return None


def _is_tensor_method(func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value in ("to", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor")


def _code(ctx: RuleContext, node: cst.CSTNode) -> str:
    text = ctx.module.code_for_node(node)
    return text if len(text) <= 40 else text[:37] + "..."

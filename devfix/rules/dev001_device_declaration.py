"""DEV001 device-declaration: declare one device where the program first needs it."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from devfix.analysis.facts import string_value
from devfix.analysis.scopes import dotted_name
from devfix.edits import InsertAfter, InsertBefore, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import is_cuda_string

AVAILABILITY_CHECKS = ("torch.cuda.is_available", "torch.cuda.device_count", "torch.accelerator.is_available", "torch.backends.mps.is_available")


class DeviceDeclaration(Rule):
    code = "DEV001"
    name = "device-declaration"
    summary = "The program needs a device but has none in reach, or hard-codes `torch.device(\"cuda\")`."
    runs_last = True  # it declares the device the other rules asked for in this round
    why = """
Every other fix writes `.to(device)`: the program needs exactly one device variable, chosen
at run time, so that it uses the GPU where there is one and still runs on a CPU-only
machine. devfix declares it after the imports of a flat script, at the top of the function
that builds the model (`main()`), or — in a helper that only receives the model — derives it
from the model's parameters instead of threading a new argument through every caller.
`torch.device("cuda")` alone crashes without a GPU and becomes the conditional form (an
explicit index is kept). A device pinned on purpose (`torch.device("cpu")`, a `--device`
option, a default that a configurator `exec(...)` overrides) is left alone. With `device-style = "accelerator"` the declaration uses
`torch.accelerator`, which also covers Apple and Intel GPUs.
"""
    example = """
import torch
from torch import nn

device = torch.device("cuda:1")
"""
    use_instead = """
import torch
from torch import nn

device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda')\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2).cuda()\n",
            'import torch\nfrom torch import nn\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nmodel = nn.Linear(2, 2).to(device)\n',
        ),
    )
    valid = (
        "import torch\ndevice = torch.device('cpu')\n",
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\nif torch.cuda.is_available():\n    device = torch.device('cuda')\nelse:\n    device = torch.device('cpu')\n",
        "import torch\ndevice = 'cuda'  # overridden with --device=...\nexec(open('configurator.py').read())\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        yield from self._hard_coded(ctx)
        for request in list(facts.device_requests.values()):
            yield self._declare(ctx, request)

    # -- declarations other rules asked for ---------------------------------------------
    def _declare(self, ctx: RuleContext, request) -> Finding:
        facts = ctx.facts
        declaration = ctx.statement(f"device = {request.code}")
        where = "module" if request.scope.kind == "module" else f"function '{request.scope.node.name.value}'"
        edits = []
        if request.scope.kind == "module":
            declaration = declaration.with_changes(leading_lines=[cst.EmptyLine()])
        if request.needs_torch_import:
            import_torch = ctx.statement("import torch")
            edits.append(InsertAfter(facts.leading_imports_end(), [import_torch]))
        if request.before:
            edits.append(InsertBefore(request.anchor, [declaration]))
        else:
            edits.append(InsertAfter(request.anchor, [declaration]))
        uses = ", ".join(sorted(set(request.users)))
        message = f"no device variable in reach in {where}, needed by {uses}; declaring `device = {request.code}`"
        return self.finding(request.node, message, edits)

    # -- torch.device("cuda") --------------------------------------------------------------
    def _hard_coded(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for scope in facts.data.scopes.values():
            for binding in facts.device_bindings(scope):
                if binding.kind != "assign" or binding.value is None:
                    continue
                cuda = self._cuda_string(ctx, binding.value)
                if cuda is None or self._inside_availability_check(ctx, binding.node):
                    continue
                if scope.kind == "module" and self._overridden_by_configuration(ctx, binding):
                    continue
                yield self._make_conditional(ctx, binding, cuda)

    @staticmethod
    def _overridden_by_configuration(ctx: RuleContext, binding) -> bool:
        """A module-level default that a later `exec(...)` / `globals().update(...)` overrides.

        The configurator idiom (nanoGPT's `exec(open('configurator.py').read())` reads
        `--device=cpu` from the command line): `device = 'cuda'` is then an option's default,
        which devfix never rewrites.
        """
        facts = ctx.facts
        for call in facts.data.calls:
            name = dotted_name(call.func) or ""
            overrides = name == "exec" or (
                name.endswith(".update") and isinstance(call.func.value, cst.Call) and dotted_name(call.func.value.func) in ("globals", "vars")
            )
            if overrides and facts.order(call) > binding.order and facts.function_scope_of(call).kind == "module":
                return True
        return False

    def _cuda_string(self, ctx: RuleContext, value: cst.BaseExpression) -> Optional[cst.SimpleString]:
        if is_cuda_string(value):
            return value  # type: ignore[return-value]
        if isinstance(value, cst.Call) and ctx.facts.qualname(value.func, at=value) == "torch.device":
            if len(value.args) == 1 and value.args[0].keyword is None and is_cuda_string(value.args[0].value):
                return value.args[0].value  # type: ignore[return-value]
        return None

    def _inside_availability_check(self, ctx: RuleContext, node: cst.CSTNode) -> bool:
        facts = ctx.facts
        for ancestor in facts.ancestors(node):
            if isinstance(ancestor, (cst.If, cst.IfExp)):
                test = ancestor.test
                for call in facts.data.calls:
                    if facts.is_inside(call, test) or call is test:
                        if facts.qualname(call.func, at=call) in AVAILABILITY_CHECKS:
                            return True
                if isinstance(test, cst.Name):
                    return True  # `if use_cuda:` — the user decides; leave it
        return False

    def _make_conditional(self, ctx: RuleContext, binding, cuda: cst.SimpleString) -> Finding:
        facts = ctx.facts
        torch_name = facts.torch_name or "torch"
        quote = cuda.quote
        cpu = cst.SimpleString(f"{quote}cpu{quote}")
        available = ctx.expression(f"{torch_name}.cuda.is_available()")
        conditional = cst.IfExp(test=available, body=cuda, orelse=cpu)
        text = string_value(cuda)
        message = f"`{binding.name}` is hard-coded to {text!r}, which fails on a machine without CUDA; falls back to 'cpu'"
        return self.finding(binding.node, message, [Replace(cuda, conditional)])

"""DEV015 legacy-cuda-idiom (opt-in): correct guarded CUDA code rewritten to the device-variable style."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.values import Kind, Place
from devfix.edits import Replace, ReplaceStatement
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import keyword, move_to, replace_arg_value

# `.type(torch.cuda.XTensor)` casts as well as moving: the dtype it casts to.
TYPE_DTYPES = {
    "FloatTensor": "float32",
    "DoubleTensor": "float64",
    "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64",
    "IntTensor": "int32",
    "ShortTensor": "int16",
    "ByteTensor": "uint8",
    "CharTensor": "int8",
    "BoolTensor": "bool",
}


class LegacyCudaIdiom(Rule):
    code = "DEV015"
    name = "legacy-cuda-idiom"
    summary = "Guarded CUDA code in the old style, rewritten to the device-variable style (opt-in modernisation)."
    fix_summary = "Rewrites correct guarded code (`if torch.cuda.is_available(): x = x.cuda()`, `Tensor = torch.cuda.FloatTensor if cuda else ...`) into the device-variable style."
    enabled_by_default = False
    why = """
`if torch.cuda.is_available(): model.cuda()` and `x.type(Tensor)` with
`Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor` are correct: they work on a
GPU machine and on a CPU-only one. They predate `torch.device` and make every placement a
branch. A migration PR that moves a code base to one device variable can ask for this rule
(`--extend-select DEV015`): the guarded move becomes an unconditional `.to(device)` (the
device already says "cuda if available"), and `x.type(Tensor)` becomes
`x.to(device, torch.float32)`, which moves and casts the same way. Off by default: it
changes working code, which only a migration asks for.
"""
    example = """
if torch.cuda.is_available():
    model.cuda()
real = imgs.type(Tensor)
"""
    use_instead = """
model.to(device)
real = imgs.to(device, torch.float32)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nif torch.cuda.is_available():\n    model.cuda()\n",
            'import torch\nfrom torch import nn\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nmodel = nn.Linear(2, 2)\nmodel.to(device)\n',
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = nn.Linear(2, 2).to(device)\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for node in facts.data.ifs:
            finding = self._collapse_if(ctx, node)
            if finding is not None:
                yield finding
        for call in facts.data.calls:
            finding = self._type_call(ctx, call)
            if finding is not None:
                yield finding

    # -- `if torch.cuda.is_available(): model.cuda()` -----------------------------------------------
    def _collapse_if(self, ctx: RuleContext, node: cst.If) -> Finding | None:
        facts = ctx.facts
        test = facts.value(node.test)
        if test is None or test.truth is not True or test.flag != "available":
            return None  # only availability checks: a user's `--cuda` flag is a choice
        if not isinstance(facts.tree.parent(node), (cst.IndentedBlock, cst.Module)):
            return None  # an `elif` branch: collapsing it would change the chain
        body = _simple_statements(node.body)
        if not body or not all(self._cuda_move(ctx, statement) is not None for statement in body):
            return None
        if node.orelse is not None:
            other = _simple_statements(node.orelse.body) if isinstance(node.orelse, cst.Else) else None
            if other is None or not all(_is_cpu_move_or_pass(statement) for statement in other):
                return None
        device = facts.devices.at(node, self.code)
        message = f"`if {facts.code(node.test, 40)}:` only moves things to CUDA"
        if device is None:
            return self.finding(
                node,
                f"{message}; no device variable can be declared here",
                hint="declare a device and move unconditionally",
            )
        moved = [self._rewrite(ctx, statement, device.code) for statement in body]
        moved[0] = moved[0].with_changes(leading_lines=node.leading_lines)
        return self.finding(
            node,
            f"{message}; moved unconditionally with `{device.code}`",
            [ReplaceStatement(node, moved)],
            device=device,
        )

    def _cuda_move(self, ctx: RuleContext, statement: cst.SimpleStatementLine) -> cst.Call | None:
        if len(statement.body) != 1:
            return None
        small = statement.body[0]
        call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return None
        value = ctx.facts.value(call)
        if value is None or value.place is not Place.DEVICE or call.func.attr.value not in ("cuda", "to"):
            return None
        if call.func.attr.value == "cuda" and any(
            a.keyword is None and not isinstance(a.value, cst.Integer) for a in call.args
        ):
            return None
        return call

    def _rewrite(self, ctx: RuleContext, statement: cst.SimpleStatementLine, device: str) -> cst.SimpleStatementLine:
        call = self._cuda_move(ctx, statement)
        assert call is not None and isinstance(call.func, cst.Attribute)
        if call.func.attr.value == "cuda":
            new = move_to(call.func.value, ctx.expression(device))
            non_blocking = keyword(call, "non_blocking")
            if non_blocking is not None:
                first = new.args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                new = new.with_changes(args=[first, non_blocking.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        else:
            new = replace_arg_value(call, call.args[0], ctx.expression(device))
        small = statement.body[0]
        return statement.with_changes(body=[small.with_changes(value=new)])

    # -- `x.type(Tensor)` with a conditional CUDA tensor type ---------------------------------------
    def _type_call(self, ctx: RuleContext, call: cst.Call) -> Finding | None:
        facts = ctx.facts
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "type"
            and len(call.args) == 1
            and call.args[0].keyword is None
        ):
            return None
        receiver = facts.value(func.value)
        kind = facts.value(call.args[0].value)
        if receiver is None or receiver.kind is not Kind.TENSOR or kind is None or kind.kind is not Kind.DEVICE:
            return None
        if kind.flag != "available" or kind.place is not Place.DEVICE:
            return None
        dtype = self._dtype(ctx, call.args[0].value)
        if dtype is None:
            return None
        device = facts.devices.at(call, self.code)
        if device is None:
            return None
        torch = facts.devices.torch_name()
        new = call.with_changes(
            func=func.with_changes(attr=cst.Name("to")),
            args=[
                cst.Arg(ctx.expression(device.code), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(ctx.expression(f"{torch}.{dtype}")),
            ],
        )
        message = f"`{facts.code(call, 40)}` moves with a conditional CUDA tensor type; written as `.to({device.code}, {torch}.{dtype})`"
        return self.finding(call, message, [Replace(call, new)], device=device)

    @staticmethod
    def _dtype(ctx: RuleContext, node: cst.BaseExpression) -> str | None:
        """The dtype of `Tensor` in `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`."""
        if not isinstance(node, cst.Name):
            return None
        names: list[str] = []
        for binding in ctx.facts.tree.scope_of(node).lookup(node.value) or ():
            value = binding.value
            if not isinstance(value, cst.IfExp):
                return None
            for branch in (value.body, value.orelse):
                if isinstance(branch, cst.Attribute):
                    names.append(branch.attr.value)
        dtypes = {TYPE_DTYPES.get(name) for name in names}
        return dtypes.pop() if len(dtypes) == 1 and None not in dtypes else None


def _simple_statements(block: cst.BaseSuite) -> list[cst.SimpleStatementLine] | None:
    if isinstance(block, cst.IndentedBlock) and all(isinstance(s, cst.SimpleStatementLine) for s in block.body):
        return list(block.body)  # type: ignore[arg-type]
    return None


def _is_cpu_move_or_pass(statement: cst.SimpleStatementLine) -> bool:
    if len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Pass):
        return True
    call = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "cpu"
        and not call.args
    )

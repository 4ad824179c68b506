"""DEV001 device-declaration: one device variable where the program first needs it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from devfix.analysis.demands import cuda_move
from devfix.analysis.devices import DeclarationRequest
from devfix.analysis.gpu_tests import tests_skipped_without_gpu
from devfix.analysis.operations import string_of as string_value
from devfix.analysis.program import Program
from devfix.analysis.reach import gpu_only_call_ids, runs_without_gpu, stops_before
from devfix.analysis.scopes import Binding, dotted_name
from devfix.analysis.torch_api import DEVICE_NAME, gpu_number
from devfix.analysis.tree import Tree
from devfix.analysis.values import Kind, Place, Value
from devfix.edits import Edit, InsertAfter, InsertBefore, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import is_cuda_string

PLACING_KEYWORDS = ("device", "map_location")


class DeviceDeclaration(Rule):
    code = "DEV001"
    name = "device-declaration"
    summary = 'A fix needs a device variable and none is in reach, or `torch.device("cuda")` is hard-coded.'
    fix_summary = (
        'Declares one `device` where the program first needs it; `torch.device("cuda:1")` falls back to the CPU.'
    )
    why = """
Every other fix writes `.to(device)`: the program needs exactly one device variable, chosen
at run time, so that it uses the GPU where there is one and still runs on a CPU-only
machine. When a fix needs one and none is in reach, devfix declares it once: after the
imports of a flat script, at the top of the function that needs it (`main()`), or — in a
helper that receives the model — derived from the model's parameters, rather than threading
a new argument through every caller (only for a parameter every caller passes a model to,
and never where the function itself decides the model's device).

A declaration hard-coded to CUDA (`device = torch.device("cuda")`) crashes without a GPU and
becomes the conditional form (an explicit index is kept) — when the program places things
with it; so does a class's `self.device = torch.device("cuda")` when its methods move things
there or call `.cuda()`. A device pinned on purpose (`torch.device("cpu")`, a `--device` option, a default
that a configurator `exec(...)` overrides) is left alone, and so is a CUDA device that is
only compared or used as a key. With `device-style = "accelerator"` new declarations use
`torch.accelerator`, which also covers Apple and Intel GPUs.
"""
    example = """
import torch
from torch import nn

device = torch.device("cuda:1")
model = nn.Linear(4, 2).to(device)
"""
    use_instead = """
import torch
from torch import nn

device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
"""
    invalid = (
        Example(
            "import torch\ndevice = torch.device('cuda')\nx = torch.ones(2).to(device)\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.ones(2).to(device)\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2).cuda()\n",
            'import torch\nfrom torch import nn\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\nmodel = nn.Linear(2, 2).to(device)\n',
        ),
    )
    valid = (
        "import torch\ndevice = torch.device('cpu')\nx = torch.ones(2).to(device)\n",
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
        "import torch\nif torch.cuda.is_available():\n    device = torch.device('cuda')\nelse:\n    device = torch.device('cpu')\n",
        "import torch\ndevice = 'cuda'  # overridden with --device=...\nexec(open('configurator.py').read())\nx = torch.ones(2).to(device)\n",
        "import torch\nkeys = {torch.device('cuda:0'): 0, torch.device('cuda:1'): 1}\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for scope in facts.data.scopes.values():
            for bindings in scope.bindings.values():
                for binding in bindings:
                    finding = self._hard_coded(ctx, binding)
                    if finding is not None:
                        yield finding
        for assign in facts.data.assigns:
            finding = self._hard_coded_attribute(ctx, assign)
            if finding is not None:
                yield finding

    # -- declarations the fixes of other rules need (built by the engine) ------------------------
    def declare(self, ctx: RuleContext, request: DeclarationRequest, users: list[str]) -> Finding:
        facts = ctx.facts
        declaration = ctx.statement(f"device = {request.code}")
        scope = request.scope
        where = "the module" if scope.kind == "module" else f"function '{scope.node.name.value}'"  # type: ignore[union-attr]
        edits: list[Edit] = []
        if scope.kind == "module" and facts.tree.parent(request.anchor) is facts.tree.module:
            # a blank line after the imports; none inside a block, where it would be indented
            declaration = declaration.with_changes(leading_lines=[cst.EmptyLine()])
        if request.needs_torch_import:
            anchor = facts.tree.leading_imports_end()
            assert anchor is not None
            edits.append(InsertAfter(anchor, [ctx.statement("import torch")]))
        edits.append(
            InsertBefore(request.anchor, [declaration])
            if request.before
            else InsertAfter(request.anchor, [declaration])
        )
        message = f"no device variable in reach in {where}, needed by {', '.join(sorted(set(users)))}; declaring `device = {request.code}`"
        return self.finding(request.node, message, edits)

    # -- torch.device("cuda") -------------------------------------------------------------------------
    def _hard_coded(self, ctx: RuleContext, binding: Binding) -> Finding | None:
        facts = ctx.facts
        if binding.kind != "assign" or binding.value is None:
            return None
        value = facts.program.bound.get((id(binding.node), binding.name))
        if value is None or not _hard_coded_device(value):
            return None
        cuda = self._cuda_string(ctx, binding.value)
        if cuda is None or not runs_without_gpu(facts.tree, facts.program, binding.node):
            return None
        if facts.tree.scope_of(binding.node).kind == "module" and self._overridden_by_configuration(ctx, binding):
            return None
        if not self._places(ctx, binding):
            return None  # only compared or used as a key: its CUDA-ness may be the point
        if facts.tree.scope_of(binding.node).kind == "module" and not facts.devices.module_may_query_cuda():
            # at import, `torch.cuda.is_available()` would run before the program picks its
            # GPUs or forks workers that use them (a forked child then cannot use CUDA)
            return self.finding(
                binding.node,
                self._message(binding.name, cuda),
                hint="choose the device where the program starts, after it picks its GPUs or forks its workers",
            )
        return self._falls_back(ctx, binding.node, binding.name, cuda)

    def _falls_back(self, ctx: RuleContext, node: cst.CSTNode, name: str, cuda: cst.SimpleString) -> Finding:
        """`"cuda"` becomes `"cuda" if torch.cuda.is_available() else "cpu"` (with `import
        torch` where only a submodule is imported)."""
        facts = ctx.facts
        torch = facts.devices.torch_name()
        edits: list[Edit] = []
        if facts.devices.torch_alias() is None:
            anchor = facts.tree.leading_imports_end()
            if anchor is None or "torch" in facts.data.module_scope.bindings:
                return self.finding(
                    node,
                    self._message(name, cuda),
                    hint='use `torch.device("cuda" if torch.cuda.is_available() else "cpu")`',
                )
            edits.append(InsertAfter(anchor, [ctx.statement("import torch")]))
        cpu = cst.SimpleString(f"{cuda.quote}cpu{cuda.quote}")
        conditional = cst.IfExp(test=ctx.expression(f"{torch}.cuda.is_available()"), body=cuda, orelse=cpu)
        edits.append(Replace(cuda, conditional))
        imported = " (and `import torch` is added)" if len(edits) > 1 else ""
        return self.finding(node, f"{self._message(name, cuda)}; falls back to 'cpu'{imported}", edits)

    def _hard_coded_attribute(self, ctx: RuleContext, assign: cst.Assign) -> Finding | None:
        """`self.device = torch.device("cuda")` in a method (textlesslib's `GslmPipeline`), which
        the class's own moves (`.to(self.device)`) or its `.cuda()` calls, once fixed, use: the
        conditional form, as for a variable."""
        facts = ctx.facts
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        method = facts.tree.enclosing(assign, cst.FunctionDef)
        klass = facts.tree.enclosing(method, cst.ClassDef) if method is not None else None
        if not (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and isinstance(method, cst.FunctionDef)
            and isinstance(klass, cst.ClassDef)
            and method.params.params
            and target.value.value == method.params.params[0].name.value
            and DEVICE_NAME.match(target.attr.value)
        ):
            return None
        cuda = self._cuda_string(ctx, assign.value)
        if cuda is None or facts.in_torchscript(assign) or not runs_without_gpu(facts.tree, facts.program, assign):
            return None
        if _chosen_in_a_branch(facts.tree, assign, method):
            return None  # `elif torch.cuda.is_available(): self.device = "cuda"` (minGPT's trainer)
        if not _placed_by_the_class(facts.tree, klass, target.attr.value):
            return None
        return self._falls_back(ctx, assign, f"{target.value.value}.{target.attr.value}", cuda)

    @staticmethod
    def _message(name: str, cuda: cst.SimpleString) -> str:
        return f"`{name}` is hard-coded to {string_value(cuda)!r}, which fails on a machine without CUDA"

    def _places(self, ctx: RuleContext, binding: Binding) -> bool:
        """The variable is used to put something on a device (`.to(d)`, `.cuda(d)`, `device=d`)
        that a CPU-only machine reaches: not in the tests of a module whose `pytestmark` skips
        them all without one (its `DEVICE = "cuda"` places nothing on a CPU-only machine), nor
        after `if device == "cuda" and not torch.cuda.is_available(): pytest.skip(...)`
        (torchmd-net's deliberately CUDA-only test, which a CPU fallback would run on the CPU),
        nor in a call that needs a GPU whatever device it is given."""
        tree = ctx.facts.tree
        program = ctx.facts.program
        asking = gpu_only_call_ids(program)  # `set_module_8bit_tensor_to_device(..., device=d)`
        skipped = tests_skipped_without_gpu(tree, ctx.facts.program)
        for call in tree.data.calls:
            func = call.func
            moving = isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda")
            for arg in call.args:
                placing = (arg.keyword is not None and arg.keyword.value in PLACING_KEYWORDS) or (
                    arg.keyword is None and moving
                )
                if not placing:
                    continue
                root = arg.value
                while isinstance(root, cst.Attribute):
                    root = root.value
                if isinstance(root, cst.Name) and root.value == binding.name:
                    seen = tree.scope_of(call).lookup(binding.name) or ()
                    if (
                        any(b is binding for b in seen)
                        and not _rebound_before(tree, program, binding, call)
                        and not (skipped and _in_a_definition(tree, call))
                        and id(call) not in asking
                        and not stops_before(tree, program, call)
                    ):
                        return True
        return self._replaces_cuda_moves(ctx, binding)

    @staticmethod
    def _replaces_cuda_moves(ctx: RuleContext, binding: Binding) -> bool:
        """The variable is the device in reach of a hard-coded `.cuda()` that runs without a GPU:
        DEV002 moves there through it (physics_informed's `cavity_flow.py` declares `device =
        torch.device('cuda')` and moves everything with `.cuda()`), so it must not stay CUDA."""
        tree = ctx.facts.tree
        program = ctx.facts.program
        for call in tree.data.calls:
            if call.args or not cuda_move(program.values, call):
                continue
            if ctx.facts.devices.in_reach(call) != binding.name:
                continue
            if any(b is binding for b in tree.scope_of(call).lookup(binding.name) or ()) and runs_without_gpu(
                tree, program, call
            ):
                return True
        return False

    @staticmethod
    def _overridden_by_configuration(ctx: RuleContext, binding: Binding) -> bool:
        """A module-level default that a later `exec(...)` / `globals().update(...)` overrides
        (nanoGPT's configurator reads `--device=cpu` from the command line): an option's default."""
        tree = ctx.facts.tree
        for call in tree.data.calls:
            name = dotted_name(call.func) or ""
            overrides = name == "exec" or (
                name.endswith(".update")
                and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Call)
                and dotted_name(call.func.value.func) in ("globals", "vars")
            )
            if overrides and tree.order(call) > binding.order and tree.function_scope_of(call).kind == "module":
                return True
        return False

    def _cuda_string(self, ctx: RuleContext, value: cst.BaseExpression) -> cst.SimpleString | None:
        if is_cuda_string(value):
            return value  # type: ignore[return-value]
        if isinstance(value, cst.Call):
            callee = ctx.facts.value(value.func)
            if (
                callee is not None
                and callee.qual == "torch.device"
                and len(value.args) == 1
                and value.args[0].keyword is None
            ):
                if is_cuda_string(value.args[0].value):
                    return value.args[0].value  # type: ignore[return-value]
        return None


def _rebound_before(tree: Tree, program: Program, binding: Binding, use: cst.CSTNode) -> bool:
    """The name is bound again in the same block, to a device that is not hard-coded, before
    `use` reads it, or, for a use in a nested function (run later), anywhere after it:
    3DInfomax's `device = 'cuda'`, replaced on the next line by `torch.device("cuda:0" if
    torch.cuda.is_available() and device == 'cuda' else "cpu")`, places nothing itself
    (`device = torch.device(device)` still carries the CUDA it was given)."""
    statement = tree.statement_of(binding.node)
    block = tree.parent(statement) if statement is not None else None
    same_scope = tree.function_scope_of(use) is tree.function_scope_of(binding.node)
    for other in tree.function_scope_of(binding.node).bindings.get(binding.name, ()):
        if other is binding or other.order <= binding.order or other.kind != "assign":
            continue
        other_statement = tree.statement_of(other.node)
        if other_statement is None or tree.parent(other_statement) is not block:
            continue
        value = program.bound.get((id(other.node), other.name))
        if value is None or _hard_coded_device(value):
            continue
        if not same_scope or other.order < tree.order(use):
            return True
    return False


def _chosen_in_a_branch(tree: Tree, node: cst.CSTNode, method: cst.FunctionDef) -> bool:
    """`node` is in a branch (`if`, `try`) of `method`: the branch chose the device."""
    for ancestor in tree.ancestors(node):
        if ancestor is method:
            return False
        if isinstance(ancestor, (cst.If, cst.Try, cst.TryStar, cst.IfExp)):
            return True
    return False


def _placed_by_the_class(tree: Tree, klass: cst.ClassDef, attribute: str) -> bool:
    """A method of the class moves something to `self.<attribute>` or calls `.cuda()` (which
    DEV002 rewrites onto that attribute)."""
    for call in tree.data.within(tree.data.calls, klass):
        func = call.func
        if not isinstance(func, cst.Attribute):
            continue
        if func.attr.value == "cuda":
            return True
        for arg in call.args:
            placing = (arg.keyword is None and func.attr.value == "to") or (
                arg.keyword is not None and arg.keyword.value in PLACING_KEYWORDS
            )
            value = arg.value
            if placing and isinstance(value, cst.Attribute) and value.attr.value == attribute:
                return True
    return False


def _hard_coded_device(value: Value) -> bool:
    """`torch.device("cuda")` or a plain `"cuda:0"` string: CUDA whatever the machine."""
    if value.kind is Kind.DEVICE:
        return value.place is Place.DEVICE and value.flag == "hard"
    return (
        value.kind is Kind.HOST
        and value.flag in (None, "constant")
        and value.text is not None
        and is_cuda_text(value.text)
    )


def is_cuda_text(text: str) -> bool:
    return text == "cuda" or gpu_number(text) is not None


def _in_a_definition(tree: Tree, node: cst.CSTNode) -> bool:
    return any(isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)) for ancestor in tree.ancestors(node))

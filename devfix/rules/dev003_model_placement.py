"""DEV003 model-placement: a model that is built and used but never moved gets `.to(device)`."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from devfix.analysis.facts import WRAPPERS, Model, keyword_arg
from devfix.analysis.scopes import chain_moves, dotted_parts
from devfix.edits import Remove, Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import move_to

USING_METHODS = {"train", "eval", "forward"}  # counting parameters is not using the model
HARMLESS_CALLEES = {"print", "len", "str", "repr", "isinstance", "type", "id", "format", "vars", "hasattr", "getattr"}
LOSSES_WITH_POSITIONAL_WEIGHT = {"CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss"}


class ModelPlacement(Rule):
    code = "DEV003"
    name = "model-placement"
    needs_placement = True
    summary = "A model that is built and trained or called, but never moved, stays on the CPU."
    why = """
Batches moved to the GPU then meet weights on the CPU: "Input type (torch.cuda.FloatTensor)
and weight type (torch.FloatTensor) should be the same" or "Expected all tensors to be on
the same device". The model is moved where it is built, before any optimizer is created from
its parameters: optimizers that create state at construction (Adagrad) would otherwise keep
that state on the CPU. Loss modules that hold tensors (`weight=`, `pos_weight=`) move too.
`nn.DataParallel` needs its wrapped module on the device: one `.to(device)` suffices.
A layer assigned into a model after the model was moved (`model.fc = nn.Linear(512, 10)`
when fine-tuning) stays on the CPU: it is moved where it is built.
"""
    example = """
model = Net()
optimizer = torch.optim.Adagrad(model.parameters())
model.to(device)
criterion = nn.CrossEntropyLoss(weight=class_weights)
"""
    use_instead = """
model = Net().to(device)
optimizer = torch.optim.Adagrad(model.parameters())
criterion = nn.CrossEntropyLoss(weight=class_weights).to(device)
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2)\nout = model(torch.ones(1, 4).to(device))\n",
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\nout = model(torch.ones(1, 4).to(device))\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nout = model(torch.ones(1, 4).to(device))\n",
        "import torch\nfrom torch import nn\nlayer = nn.Linear(4, 2)\nprint(layer)\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        facts = ctx.facts
        for model in facts.models:
            finding = self._check_model(ctx, model)
            if finding is not None:
                yield finding
            if model.kind == "model":
                yield from self._layers_added_after_the_move(ctx, model)

    def _check_model(self, ctx: RuleContext, model: Model) -> Optional[Finding]:
        facts = ctx.facts
        if model.kind == "loss" and not self._loss_holds_tensor(ctx, model):
            return None
        if not self._is_used(ctx, model):
            return None
        if keyword_arg(model.call, "device") is not None or chain_moves(model.binding.value):
            return None
        if isinstance(model.call.func, cst.Name) and model.call.func.value in facts.self_placing_classes:
            return None
        moves = [call for call in facts.references(model.name, model.scope) if _is_move(call)]
        moves += [call for call in self._wrapper_moves(ctx, model)]
        if moves:
            return self._check_move_order(ctx, model, moves)
        if self._escapes(ctx, model):
            return None
        what = "loss" if model.kind == "loss" else "model"
        detail = " holds a weight tensor that" if model.kind == "loss" else ""
        message = f"{what} '{model.name}'{detail} is never moved to the device"
        device = facts.need_device(model.binding.node, self.code)
        if device is None:
            return self.finding(model.call, message, hint="move it with `.to(device)` after a device is declared")
        return self.finding(model.call, f"{message}; moved with `.to({device.code})`", [Replace(model.call, move_to(model.call, ctx.expression(device.code)))])

    # -- `model.fc = nn.Linear(...)` after the model was moved -----------------------------
    def _layers_added_after_the_move(self, ctx: RuleContext, model: Model) -> Iterator[Finding]:
        """A layer assigned into a model after it was moved stays on the CPU (the transfer
        learning classic: `model.to(device)`, then `model.fc = nn.Linear(512, 10)`)."""
        facts = ctx.facts
        moved_at = self._moved_at(ctx, model)
        if moved_at is None:
            return
        order, device = moved_at
        for assign in facts.data.assigns:
            if len(assign.targets) != 1 or facts.order(assign) <= order:
                continue
            target = assign.targets[0].target
            if not (isinstance(target, cst.Attribute) and dotted_parts(target) and dotted_parts(target)[0] == model.name):
                continue
            if facts.binding_scope(facts.scope_of(assign), model.name) is not model.scope or facts.function_scope_of(assign) is not model.scope:
                continue
            layer = facts.wrapped_model_call(assign.value, assign)
            if layer is None or layer is not assign.value or keyword_arg(layer, "device") is not None:
                continue
            name = ctx.module.code_for_node(target)
            message = f"layer `{name}` is added after '{model.name}' was moved to the device, so it stays on the CPU"
            yield self.finding(layer, f"{message}; moved with `.to({ctx.module.code_for_node(device)})`", [Replace(layer, move_to(layer, device))])

    def _moved_at(self, ctx: RuleContext, model: Model):
        """(preorder index, device expression) of the model's first move, if it is moved
        unconditionally in its own scope: at construction or by a `model.to(device)` statement."""
        facts = ctx.facts
        value = model.binding.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "to" and value.args:
            return facts.order(model.binding.node), value.args[0].value
        owner = model.scope.node
        block = owner if isinstance(owner, cst.Module) else getattr(owner, "body", None)
        for call in facts.references(model.name, model.scope):
            statement = facts.statement_of(call)
            if (
                _is_move(call) and call.func.attr.value == "to" and call.args and call.args[0].keyword is None
                and isinstance(call.func.value, cst.Name) and self._is_simple_move(model, statement, call)
                and facts.parent(statement) is block
            ):
                return facts.order(call), call.args[0].value
        return None

    # -- "is it used?" and "is it moved?" -------------------------------------------------
    def _is_used(self, ctx: RuleContext, model: Model) -> bool:
        """Called, trained, or optimized: a model that is only inspected needs no device."""
        facts = ctx.facts
        if any(model.name in opt.model_names and facts.binding_scope(opt.scope, model.name) is model.scope for opt in facts.optimizers):
            return True
        for call in facts.references(model.name, model.scope):
            func = call.func
            if isinstance(func, cst.Name):
                return True  # model(x)
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in USING_METHODS:
                return True
        for call, _ in facts.calls_passing(model.name, model.scope):
            if facts.local_function(call) is not None or facts.qualname(call.func, at=call) in WRAPPERS:
                return True
        return False

    def _wrapper_moves(self, ctx: RuleContext, model: Model) -> Iterator[cst.Call]:
        """`nn.DataParallel(model).to(device)` moves `model` too."""
        facts = ctx.facts
        for call, _ in facts.calls_passing(model.name, model.scope):
            if facts.qualname(call.func, at=call) in WRAPPERS:
                parent = facts.parent(call)
                if isinstance(parent, cst.Attribute) and parent.attr.value in ("to", "cuda"):
                    yield call

    def _escapes(self, ctx: RuleContext, model: Model) -> bool:
        """The model goes somewhere devfix cannot see (a helper of another module that may move it,
        or the caller it is returned to)."""
        facts = ctx.facts
        if facts.returned(model.name, model.scope):
            return True
        for call, position in facts.calls_passing(model.name, model.scope):
            function = facts.local_function(call)
            if function is not None:
                if position >= 0 and self._function_moves_param(ctx, function, position):
                    return True
                continue
            qual = facts.qualname(call.func, at=call)
            name = call.func.value if isinstance(call.func, cst.Name) else None
            if qual and qual.startswith("torch."):
                continue
            if name in HARMLESS_CALLEES:
                continue
            return True
        return False

    def _function_moves_param(self, ctx: RuleContext, function: cst.FunctionDef, position: int) -> bool:
        params = function.params.params
        if position >= len(params):
            return True  # *args: unknown
        scope = ctx.facts.data.scopes[id(function)]
        return any(_is_move(call) for call in ctx.facts.references(params[position].name.value, scope))

    def _loss_holds_tensor(self, ctx: RuleContext, model: Model) -> bool:
        call = model.call
        weight = keyword_arg(call, "weight") or keyword_arg(call, "pos_weight")
        if weight is None and call.args and call.args[0].keyword is None:
            name = (ctx.facts.qualname(call.func, at=call) or "").split(".")[-1]
            if name in LOSSES_WITH_POSITIONAL_WEIGHT:
                weight = call.args[0]
        if weight is None or isinstance(weight.value, cst.Name) and weight.value.value == "None":
            return False
        value = weight.value
        if chain_moves(value) or (isinstance(value, cst.Call) and keyword_arg(value, "device") is not None):
            return False
        if isinstance(value, cst.Name):
            bindings = ctx.facts.bindings_at(value.value, call)
            if bindings and any(b.value is not None and (chain_moves(b.value) or (isinstance(b.value, cst.Call) and keyword_arg(b.value, "device"))) for b in bindings):
                return False
            if bindings and any(b.kind == "param" for b in bindings):
                return False  # came from elsewhere: may already be on the device
        return True

    # -- moved, but after an optimizer was built ----------------------------------------
    def _check_move_order(self, ctx: RuleContext, model: Model, moves) -> Optional[Finding]:
        facts = ctx.facts
        block = facts.block_of(model.scope)
        build_stmt = facts.statement_of(model.binding.node)
        if build_stmt not in block:
            return None
        first_move = min(moves, key=facts.order)
        move_stmt = facts.statement_of(first_move)
        if move_stmt not in block or not self._is_simple_move(model, move_stmt, first_move):
            return None
        optimizer = next(
            (
                opt for opt in facts.optimizers
                if model.name in opt.model_names and opt.scope is model.scope
                and facts.order(model.binding.node) < facts.order(opt.call) < facts.order(first_move)
            ),
            None,
        )
        if optimizer is None:
            return None
        device_arg = first_move.args[0].value if first_move.args else None
        if device_arg is None or not self._defined_before(ctx, device_arg, model):
            return None
        message = f"model '{model.name}' is moved to the device after an optimizer was built from its parameters; move it where it is built"
        new_call = move_to(model.call, device_arg)
        return self.finding(first_move, message, [Replace(model.call, new_call), Remove(move_stmt)])

    @staticmethod
    def _is_simple_move(model: Model, stmt: cst.BaseStatement, call: cst.Call) -> bool:
        """`model.to(device)` or `model = model.to(device)` alone on its line, one argument."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return False
        if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "to" and isinstance(call.func.value, cst.Name)):
            return False
        if len(call.args) != 1 or call.args[0].keyword is not None:
            return False
        small = stmt.body[0]
        if isinstance(small, cst.Expr):
            return small.value is call
        if isinstance(small, cst.Assign):
            return small.value is call and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == model.name
        return False

    def _defined_before(self, ctx: RuleContext, expr: cst.BaseExpression, model: Model) -> bool:
        """Every name in the device expression is bound before the model's construction."""
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return isinstance(expr, cst.SimpleString)
        bindings = ctx.facts.bindings_at(root.value, expr)
        if not bindings:
            return False
        build = ctx.facts.order(model.binding.node)
        return all(b.kind in ("param", "import") or b.order < build or ctx.facts.binding_scope(model.scope, root.value) is not model.scope for b in bindings)


def _is_move(call: cst.Call) -> bool:
    """`model.to(...)`, `model.cuda()`, `model.encoder.to(...)` — not `model(x).to(...)`."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda", "to_empty") and dotted_parts(func.value) is not None

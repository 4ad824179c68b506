"""DEV013 plain-list-of-modules (unsafe): layers in a plain list/dict become ModuleList/ModuleDict."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from devfix.analysis.classinfo import ClassInfo
from devfix.analysis.values import Kind
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext
from devfix.rules.common import grandparent

UNSAFE_NOTE = "unsafe fix: it changes what the optimizer trains and what state_dict() holds"
# What a ModuleList / ModuleDict supports of the list / dict API (a use of anything else: no fix).
LIST_METHODS = {"append", "extend", "insert", "pop", "__len__", "__iter__"}
DICT_METHODS = {"keys", "values", "items", "update", "pop", "clear"}


# A class that defines these itself decides what is trained, saved and moved: a plain list it
# walks there is on purpose.
_MANAGED_BY_HAND = ("parameters", "state_dict", "cuda", "to")


class PlainListOfModules(Rule):
    code = "DEV013"
    name = "plain-list-of-modules"
    summary = "Layers kept in a plain list or dict are invisible to `.to()`, `.parameters()` and `state_dict()`."
    fix_summary = "Layers in a plain `list`/`dict` attribute become `nn.ModuleList`/`nn.ModuleDict` (changes what is trained and saved)."
    safety = "unsafe"
    why = """
`nn.Module` registers the submodules assigned to its attributes, but not the ones inside a
plain Python `list` or `dict`. Those layers are not moved by `model.to(device)` ("Expected
all tensors to be on the same device" in forward), are not returned by `.parameters()` (the
optimizer never trains them) and are not saved by `state_dict()`. `nn.ModuleList` /
`nn.ModuleDict` register them. The fix is unsafe: the layers start being trained and
appear in checkpoints (older checkpoints lack their keys).
"""
    example = """
self.layers = [nn.Linear(d, d) for _ in range(n)]
"""
    use_instead = """
self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])
"""
    invalid = (
        Example(
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = [nn.Linear(2, 2) for _ in range(3)]\n\n    def forward(self, x):\n"
            "        for layer in self.layers:\n            x = layer(x)\n        return x\n",
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])\n\n    def forward(self, x):\n"
            "        for layer in self.layers:\n            x = layer(x)\n        return x\n",
        ),
    )
    valid = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])\n        self.sizes = [2, 2, 2]\n",
    )

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for klass in ctx.facts.program.classes.values():
            if klass.kind != "module" or klass.framework:
                continue
            init = klass.methods.get("__init__")
            if klass.registers_by_hand:
                continue  # `self.add_module(...)` over the list: its layers may all be registered
            if any(klass.method(name) is not None for name in _MANAGED_BY_HAND):
                continue  # its own `parameters()` / `cuda()` walk the list (epymarl's per-agent critics)
            for name, writes in klass.writes.items():
                if any(value.kind is Kind.MODULE for _, value in writes):
                    continue  # `self.blocks = nn.Sequential(*self.blocks)`: the list was a step
                for target, _ in writes:
                    if init is not None and ctx.facts.tree.is_inside(target, init):
                        finding = self._check_write(ctx, klass, name, target, len(writes))
                        if finding is not None:
                            yield finding

    def _check_write(
        self, ctx: RuleContext, klass: ClassInfo, attr: str, target: cst.CSTNode, count: int
    ) -> Finding | None:
        tree = ctx.facts.tree
        assign = grandparent(tree, target)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        kind = self._container_kind(ctx, klass, attr, assign.value)
        if kind is None or not self._used_after_construction(ctx, klass, attr):
            return None
        if _registered_through_a_container(ctx, assign, attr):
            return None
        wrapper = "ModuleList" if kind == "list" else "ModuleDict"
        self_name = tree.code(target.value)  # type: ignore[attr-defined]
        message = f"`{self_name}.{attr}` keeps layers in a plain {kind}: they are not moved, trained or saved"
        nn_name = self._nn_name(ctx, assign)
        if nn_name is None or count != 1 or not self._uses_fit(ctx, klass, attr, kind):
            return self.finding(assign, f"{message}; use nn.{wrapper}", hint=f"wrap it in nn.{wrapper} ({UNSAFE_NOTE})")
        func = ctx.expression(f"{nn_name}.{wrapper}")
        value = assign.value
        args = [] if isinstance(value, cst.List) and not value.elements else [cst.Arg(value)]
        new = cst.Call(func=func, args=args)
        return self.finding(
            assign, f"{message}; the fix wraps it in `{nn_name}.{wrapper}` ({UNSAFE_NOTE})", [Replace(value, new)]
        )

    def _is_module(self, ctx: RuleContext, expr: cst.BaseExpression) -> bool:
        value = ctx.facts.value(expr)
        return isinstance(expr, cst.Call) and value is not None and value.kind is Kind.MODULE

    def _holds_weights(self, ctx: RuleContext, exprs: Sequence[cst.BaseExpression]) -> bool:
        values = [ctx.facts.value(e) for e in exprs]
        return any(not value.neutral for value in values if value is not None)

    def _container_kind(self, ctx: RuleContext, klass: ClassInfo, attr: str, value: cst.BaseExpression) -> str | None:
        def is_module(expr: cst.BaseExpression) -> bool:
            return self._is_module(ctx, expr)

        if isinstance(value, cst.ListComp) and is_module(value.elt) and self._holds_weights(ctx, [value.elt]):
            return "list"
        if isinstance(value, cst.List):
            elements = [e.value for e in value.elements]
            if elements and all(is_module(e) for e in elements) and self._holds_weights(ctx, elements):
                return "list"
            if not elements and self._appended_modules(ctx, klass, attr):
                return "list"
        if isinstance(value, cst.Dict):
            items = list(value.elements)
            if items and all(
                isinstance(e, cst.DictElement)
                and isinstance(e.key, (cst.SimpleString, cst.FormattedString))
                and is_module(e.value)
                for e in items
            ):
                if self._holds_weights(ctx, [e.value for e in items if isinstance(e, cst.DictElement)]):
                    return "dict"
        if isinstance(value, cst.DictComp) and isinstance(value.key, cst.FormattedString) and is_module(value.value):
            return "dict" if self._holds_weights(ctx, [value.value]) else None
        return None

    def _reads(self, ctx: RuleContext, klass: ClassInfo, attr: str) -> list[cst.Attribute]:
        """`self.<attr>` loads in the class's methods."""
        tree = ctx.facts.tree
        found = []
        for node in tree.data.name_attributes:
            if node.attr.value != attr or not tree.is_inside(node, klass.node):
                continue
            method = tree.enclosing(node, cst.FunctionDef)
            if not isinstance(method, cst.FunctionDef) or tree.class_of_method(method) is not klass.node:
                continue
            params = method.params.params
            if params and isinstance(node.value, cst.Name) and node.value.value == params[0].name.value:
                parent = tree.parent(node)
                if not isinstance(parent, cst.AssignTarget):
                    found.append(node)
        return found

    def _used_after_construction(self, ctx: RuleContext, klass: ClassInfo, attr: str) -> bool:
        """The container is read by a method that runs after `__init__` (forward...). A lookup
        table read only while building (`self.backbone = self.resnet_dict[name]`) hands its
        chosen layer to a registered attribute; the others are never used."""
        program = ctx.facts.program
        for read in self._reads(ctx, klass, attr):
            method = ctx.facts.tree.enclosing(read, cst.FunctionDef)
            info = program.functions.get(id(method)) if method is not None else None
            if info is None or not program.construction_time(info):
                return True
        return False

    def _appended_modules(self, ctx: RuleContext, klass: ClassInfo, attr: str) -> bool:
        """`self.layers = []` followed, in `__init__`, only by `self.layers.append(nn.X(...))`."""
        tree = ctx.facts.tree
        init = klass.methods.get("__init__")
        appends = 0
        for read in self._reads(ctx, klass, attr):
            if init is None or not tree.is_inside(read, init):
                continue
            parent = tree.parent(read)
            outer = tree.parent(parent) if isinstance(parent, cst.Attribute) else None
            if not (
                isinstance(outer, cst.Call) and isinstance(parent, cst.Attribute) and parent.attr.value == "append"
            ):
                return False
            argument = outer.args[0].value if outer.args else None
            if argument is None or not self._is_module(ctx, argument):
                return False
            appends += 1
        return appends > 0

    def _uses_fit(self, ctx: RuleContext, klass: ClassInfo, attr: str, kind: str) -> bool:
        """Every `self.x.method(...)` use is one the Module container supports."""
        tree = ctx.facts.tree
        allowed = LIST_METHODS if kind == "list" else DICT_METHODS
        for read in self._reads(ctx, klass, attr):
            parent = tree.parent(read)
            if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value not in allowed:
                return False
            if isinstance(parent, cst.BinaryOperation):
                return False  # `self.layers + [...]`: ModuleList does not support +
        return True

    def _nn_name(self, ctx: RuleContext, at: cst.CSTNode) -> str | None:
        """How this file spells `torch.nn` at the assignment: `nn`, `torch.nn`, `T.nn`."""
        tree = ctx.facts.tree
        for candidate in ("nn", "torch.nn"):
            if tree.qualname(ctx.expression(candidate), at=at) == "torch.nn":
                return candidate
        torch = ctx.facts.devices.torch_alias()
        return f"{torch}.nn" if torch is not None else None


def _registered_through_a_container(ctx: RuleContext, assign: cst.Assign, attr: str) -> bool:
    """`self.fc = nn.Sequential(self.noisy_layers[0], nn.ReLU(), self.noisy_layers[1])` (or
    `nn.Sequential(*self.noisy_layers)`, `nn.ModuleList(self.layer_list)`) in the same method: the plain list is only an alias
    of layers a registered container holds, so they are moved, trained and saved."""
    facts = ctx.facts
    method = facts.tree.enclosing(assign, cst.FunctionDef)
    if method is None:
        return False
    for call in facts.data.within(facts.data.calls, method):
        value = facts.value(call)
        if value is None or value.kind is not Kind.MODULE:
            continue
        for arg in call.args:
            if arg.star == "*":
                alias = arg.value  # `nn.Sequential(*self.layers)`
            elif arg.star == "" and isinstance(arg.value, cst.Subscript):
                alias = arg.value.value  # `nn.Sequential(self.layers[0], ...)`
            elif arg.star == "":
                alias = arg.value  # `self.layer = nn.ModuleList(self.layer_list)`
            else:
                continue
            if isinstance(alias, cst.Attribute) and alias.attr.value == attr and isinstance(alias.value, cst.Name):
                return True
    return False

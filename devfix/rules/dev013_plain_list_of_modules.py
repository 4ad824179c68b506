"""DEV013 plain-list-of-modules (unsafe): layers in a plain list/dict become ModuleList/ModuleDict."""

from __future__ import annotations

from typing import Iterator, List, Optional

import libcst as cst

from devfix.analysis.tensors import AttributeWrite, ModuleClass, method_name
from devfix.edits import Replace
from devfix.rules.base import Example, Finding, Rule, RuleContext

UNSAFE_NOTE = "unsafe fix: it changes what the optimizer trains and what state_dict() holds"
# What a ModuleList / ModuleDict supports of the list / dict API (a use of anything else: no fix).
LIST_METHODS = {"append", "extend", "insert", "pop", "__len__", "__iter__"}
DICT_METHODS = {"keys", "values", "items", "update", "pop", "clear"}


class PlainListOfModules(Rule):
    code = "DEV013"
    name = "plain-list-of-modules"
    summary = "Layers kept in a plain list or dict are invisible to `.to()`, `.parameters()` and `state_dict()`."
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
        for info in ctx.facts.module_classes.values():
            for write in info.init_writes:
                if write.assign is not None:
                    finding = self._check_write(ctx, info, write)
                    if finding is not None:
                        yield finding

    def _check_write(self, ctx: RuleContext, info: ModuleClass, write: AttributeWrite) -> Optional[Finding]:
        value = write.value
        kind = self._container_kind(ctx, info, write)
        if kind is None:
            return None
        wrapper = "ModuleList" if kind == "list" else "ModuleDict"
        self_name = write.method.params.params[0].name.value
        message = f"`{self_name}.{write.attr}` keeps layers in a plain {kind}: they are not moved, trained or saved"
        nn_name = self._nn_name(ctx, write)
        if nn_name is None or len(info.writes_of(write.attr)) != 1 or not self._uses_fit(ctx, info, write.attr, kind):
            return self.finding(write.assign, f"{message}; use nn.{wrapper}", hint=f"wrap it in nn.{wrapper} ({UNSAFE_NOTE})")
        func = ctx.expression(f"{nn_name}.{wrapper}")
        args = [] if self._is_empty(value) else [cst.Arg(value)]
        new = cst.Call(func=func, args=args)
        return self.finding(write.assign, f"{message}; the fix wraps it in `{nn_name}.{wrapper}` ({UNSAFE_NOTE})", [Replace(value, new)])

    def _container_kind(self, ctx: RuleContext, info: ModuleClass, write: AttributeWrite) -> Optional[str]:
        facts = ctx.facts
        value = write.value
        is_module = lambda expr: isinstance(expr, cst.Call) and facts.module_kind(expr) is not None  # noqa: E731
        if isinstance(value, cst.ListComp) and is_module(value.elt):
            return "list"
        if isinstance(value, cst.List):
            elements = [e.value for e in value.elements]
            if elements and all(is_module(e) for e in elements):
                return "list"
            if not elements and self._appended_modules(ctx, info, write):
                return "list"
        if isinstance(value, cst.Dict):
            elements = list(value.elements)
            if elements and all(isinstance(e, cst.DictElement) and isinstance(e.key, (cst.SimpleString, cst.FormattedString)) and is_module(e.value) for e in elements):
                return "dict"
        if isinstance(value, cst.DictComp) and isinstance(value.key, cst.FormattedString) and is_module(value.value):
            return "dict"
        return None

    def _appended_modules(self, ctx: RuleContext, info: ModuleClass, write: AttributeWrite) -> bool:
        """`self.layers = []` followed, in `__init__`, only by `self.layers.append(nn.X(...))`."""
        facts = ctx.facts
        appends: List[cst.Call] = []
        for read in info.reads.get(write.attr, []):
            if not facts.is_inside(read, write.method):
                continue
            parent = facts.parent(read)
            outer = facts.parent(parent) if isinstance(parent, cst.Attribute) else None
            if method_name(outer) != "append":
                return False
            arg = outer.args[0].value if outer.args else None  # type: ignore[union-attr]
            if not (isinstance(arg, cst.Call) and facts.module_kind(arg) is not None):
                return False
            appends.append(outer)  # type: ignore[arg-type]
        return bool(appends)

    def _uses_fit(self, ctx: RuleContext, info: ModuleClass, attr: str, kind: str) -> bool:
        """Every `self.x.method(...)` use is one the Module container supports."""
        facts = ctx.facts
        allowed = LIST_METHODS if kind == "list" else DICT_METHODS
        for read in info.reads.get(attr, []):
            parent = facts.parent(read)
            if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value not in allowed:
                return False
            if isinstance(parent, cst.BinaryOperation):
                return False  # `self.layers + [...]`
        return True

    def _nn_name(self, ctx: RuleContext, write: AttributeWrite) -> Optional[str]:
        """How this file spells `torch.nn` at the assignment: `nn`, `torch.nn`, `T.nn`."""
        facts = ctx.facts
        for candidate in ("nn", "torch.nn"):
            if facts.qualname(ctx.expression(candidate), at=write.assign) == "torch.nn":
                return candidate
        if facts.torch_name is not None:
            return f"{facts.torch_name}.nn"
        return None

    @staticmethod
    def _is_empty(value: cst.BaseExpression) -> bool:
        return isinstance(value, cst.List) and not value.elements

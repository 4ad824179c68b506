"""What a name is bound to: enclosing scopes, module globals, imports and builtins.

An import of a project file binds what that file's summary exports (linking.py): its
classes and functions become references the flow can call into, its constants their
values. Any other import binds a qualified name (`torch.nn.Linear`) that the torch
vocabulary (torch_api.py) reads. A mixin of Program: it reads the flow's recordings
(`bound`, `module_env`) and registers linked classes with the class flow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from devfix.analysis.evaluate import BUILTIN_NAMES
from devfix.analysis.linking import GPU_ON_IMPORT, ClassSummary, Export, FunctionSummary
from devfix.analysis.scopes import Scope, dotted_name
from devfix.analysis.state import FlowState
from devfix.analysis.torch_api import GPU_ONLY_PACKAGES
from devfix.analysis.values import UNKNOWN, Kind, Place, Value, join

if TYPE_CHECKING:
    from devfix.analysis.evaluate import Frame


class NameFlow(FlowState):
    """Name resolution for the flow of one file (a mixin of Program)."""

    def global_value(self, name: str, scope: Scope, seen: dict[str, Value] | None = None) -> Value:
        """A name not bound in the evaluated scope: an enclosing function's, a module global
        (as the function's calls saw it, `seen`, where known), an import, a builtin."""
        current: Scope | None = scope.visible_parent()
        while current is not None and current.kind != "module":
            if name in current.bindings:
                return self._binding_value(current, name)
            current = current.visible_parent()
        if seen is not None and name in seen:
            return seen[name]
        if name in self.module_env:
            return self.module_env[name]
        if name in self.data.module_scope.bindings:
            return self._binding_value(self.data.module_scope, name)
        if name in BUILTIN_NAMES:
            return Value(Kind.OTHER, Place.UNKNOWN, qual=f"builtins.{name}")
        return UNKNOWN

    def _binding_value(self, scope: Scope, name: str) -> Value:
        """The joined value of every binding of `name` in `scope` recorded so far."""
        found: Value | None = None
        for binding in scope.bindings.get(name, ()):
            if (id(binding.node), name) in self.bound:
                value = self.bound[(id(binding.node), name)]  # an import, linked or not, or an assignment
            elif binding.kind == "import" and binding.qualname:
                value = Value(Kind.OTHER, Place.UNKNOWN, qual=binding.qualname)
            elif binding.kind in ("def", "class"):
                value = Value(Kind.OTHER, Place.UNKNOWN, ref=binding.node)
            else:
                value = self.bound.get((id(binding.node), name), UNKNOWN)
            found = join(found, value) if found is not None else value
        return found or UNKNOWN

    def imported_as(self, name: str, scope: Scope) -> list[str]:
        """What `name` is imported as in some binding, when other bindings make it ambiguous
        (`try: from tqdm import tqdm` / `except ImportError: def tqdm(...)`)."""
        return [b.qualname for b in scope.lookup(name) or () if b.kind == "import" and b.qualname]

    def bind_import(self, frame: Frame, node: cst.Import | cst.ImportFrom) -> None:
        if frame.function is not None and self._imports_gpu_code(node):
            # `from torchqrnn import QRNN` in a model's `__init__` (the QRNN imports CuPy): the
            # function needs a GPU to import it, as a file with that import at its top does
            self.gpu_only_calls.append(node)
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    frame.env[alias.asname.name.value] = Value(Kind.OTHER, Place.UNKNOWN, qual=full)
                else:
                    top = full.split(".")[0]
                    frame.env[top] = Value(Kind.OTHER, Place.UNKNOWN, qual=top)
            return
        module = dotted_name(node.module) if node.module is not None else None
        level = len(node.relative)
        if isinstance(node.names, cst.ImportStar):
            self._bind_star(frame, module, level)
            return
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = (
                alias.asname.name.value
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                else name
            )
            export = self.linker(module, level, name) if self.linker is not None else None
            if export is not None:
                value = self.link_value(export)
            elif node.relative or module is None:
                value = UNKNOWN  # the project's own module, not analysed with this one
            else:
                value = Value(Kind.OTHER, Place.UNKNOWN, qual=f"{module}.{name}")
            frame.env[local] = value
            self.bound[(id(node), local)] = value

    def _imports_gpu_code(self, node: cst.Import | cst.ImportFrom) -> bool:
        """The import brings in a GPU-only package, or a project file that needs a GPU when imported."""
        if isinstance(node, cst.Import):
            return any((dotted_name(alias.name) or "").split(".")[0] in GPU_ONLY_PACKAGES for alias in node.names)
        module = dotted_name(node.module) if node.module is not None else None
        if not node.relative and module is not None and module.split(".")[0] in GPU_ONLY_PACKAGES:
            return True
        return self.linker is not None and self.linker(module, len(node.relative), GPU_ON_IMPORT) is not None

    def _bind_star(self, frame: Frame, module: str | None, level: int) -> None:
        """`from .models import *` of a project file: the names its summary exports."""
        if self.linker is None:
            return
        every = self.linker(module, level, "*")
        if isinstance(every, Value) and every.attrs:
            for name, _ in every.attrs:
                export = self.linker(module, level, name)
                if export is not None and not name.startswith("_"):
                    frame.env[name] = self.link_value(export)

    def link_value(self, export: Export) -> Value:
        """A project file's class, function or constant, bound in this file."""
        if isinstance(export, ClassSummary):
            if id(export.node) not in self.classes:
                self.classes[id(export.node)] = self.linked_class(export)
                self.linked[id(export.node)] = export
            return Value(Kind.OTHER, Place.UNKNOWN, ref=export.node)
        if isinstance(export, FunctionSummary):
            self.linked_functions[id(export.node)] = export
            self.linked[id(export.node)] = export
            return Value(Kind.OTHER, Place.UNKNOWN, ref=export.node)
        return export

    def linked_qual(self, qual: str) -> Value | None:
        """`utils.train` after `import utils`, when `utils` is a project file."""
        if self.linker is None or "." not in qual:
            return None
        module, _, name = qual.rpartition(".")
        export = self.linker(module, 0, name)
        return self.link_value(export) if export is not None else None

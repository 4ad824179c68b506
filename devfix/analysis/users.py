"""Who builds a project's classes and calls its functions, and whether that code can run on a
machine without a GPU (spec principle 9).

A model class whose `forward` hard-codes `.cuda()` is a bug only if some program can run it
without a GPU. When every call of it in the run sits in code that cannot (after
`assert torch.cuda.is_available()`, in a GPU-only test), rewriting the class is churn. Each
file reports its calls of top-level classes and functions, its own and its imports' (`calls`);
the engine joins them over the run (`gpu_only_users`), checks that nothing else names them
(`named_elsewhere`), and analyses the defining files again with the answer (reach.py).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import NamedTuple

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.reach import runs_without_gpu
from devfix.analysis.torch_api import HOST_LIBRARIES
from devfix.analysis.tree import Tree
from devfix.analysis.values import Value

Use = tuple[str, str, bool]  # (defining file, top-level name, the call can run without a GPU)

# A method call the file cannot tie to its class (`model.getLoss(...)` on a model built in
# another file) is a use of every method of that name: `("", name, runs)`. The engine gives it
# to the one top-level class of the run that defines the name, if only one does
# (`gpu_only._method_owners`), as `(path, "Class.name", runs)`.
BY_NAME = ""

# Methods that code other than the run's own calls (PyTorch's `__call__`, autograd, a
# DataLoader, Lightning, pytest, a thread): their explicit calls are not all their calls.
_CALLED_BY_FRAMEWORKS = frozenset(
    {"forward", "backward", "extra_repr", "reset_parameters", "step", "run", "setup", "teardown",
     "training_step", "validation_step", "test_step", "predict_step", "configure_optimizers"}
)  # fmt: skip


def method_by_name(name: str) -> bool:
    """A method whose explicit calls are all its calls, as far as the run shows."""
    return not (name.startswith(("__", "on_", "test")) or name in _CALLED_BY_FRAMEWORKS)


def calls(tree: Tree, program: Program) -> list[Use]:
    """Every call in the file of a top-level class or function of a project file, and of a
    method of a top-level class (its own file's, or by name)."""
    found: list[Use] = []
    for call in tree.data.calls:
        value = program.values.get(id(call.func))
        ref = value.ref if value is not None else None
        method = _method_use(tree, program, call, value)
        if method is not None:
            found.append(method)
            continue
        refs = [ref] if isinstance(ref, (cst.ClassDef, cst.FunctionDef)) else _chosen(tree, program, call)
        for chosen in refs:
            if isinstance(chosen, cst.ClassDef) and _built_by_its_own_method(tree, program, chosen, call):
                continue  # `def new(self): return Network(...)`: only an instance built elsewhere runs it
            export = program.linked.get(id(chosen))
            if export is not None:
                path = getattr(export, "path", "")
            elif tree.parent(chosen) is tree.module:
                path = program.path
            else:
                continue
            if path:
                # a call inside `try: ... except Exception:` still runs: only a GPU-only path counts
                found.append((path, chosen.name.value, runs_without_gpu(tree, program, call, caught=False)))
    return found


def _chosen(tree: Tree, program: Program, call: cst.Call) -> list[cst.ClassDef | cst.FunctionDef]:
    """The classes (or functions) a call builds through a variable that picks one of them:
    `mem_func = RGBMoCo if opt.modal == 'RGB' else CMCMoCo; mem_func(...)` (PyContrast),
    `HEAD_DICT = {'ArcFace': ArcFace, ...}; HEAD_DICT[name](...)` (cavaface). Every binding of
    the variable in the scope is such a choice; each class it may hold is built by the call."""
    func = call.func
    holder = func.value if isinstance(func, cst.Subscript) else func
    if not isinstance(holder, cst.Name):
        return []
    bindings = tree.scope_of(call).lookup(holder.value) or []
    options: list[cst.BaseExpression] = []
    for binding in bindings:
        picked = binding.value
        if isinstance(func, cst.Name) and isinstance(picked, cst.IfExp):
            options += [picked.body, picked.orelse]
        elif isinstance(func, cst.Subscript) and isinstance(picked, cst.Dict):
            options += [element.value for element in picked.elements if isinstance(element, cst.DictElement)]
        else:
            return []  # bound otherwise too (a parameter, a loop, a class handed in)
    refs = []
    for option in options:
        value = program.values.get(id(option))
        ref = value.ref if value is not None else None
        if not isinstance(option, cst.Name) or not isinstance(ref, (cst.ClassDef, cst.FunctionDef)):
            return []  # something else may be picked: a class handed in, a library's
        refs.append(ref)
    return refs


def _method_use(tree: Tree, program: Program, call: cst.Call, value: Value | None) -> Use | None:
    """`self.helper(...)` on a method of a top-level class of this file, or `x.name(...)` on an
    object of no known class or library (`value.qual`)."""
    if not isinstance(call.func, cst.Attribute) or not method_by_name(call.func.attr.value):
        return None
    name = call.func.attr.value
    ref = value.ref if value is not None else None
    if isinstance(ref, cst.FunctionDef):
        klass = _top_level_class(tree, ref)
        if klass is None:
            return None
        return (
            program.path,
            f"{klass.name.value}.{ref.name.value}",
            runs_without_gpu(tree, program, call, caught=False),
        )
    if (value is not None and (ref is not None or value.qual is not None)) or name not in program.project_methods:
        return None  # a library's object, or a name no file of the run defines in an indented `def`
    return (BY_NAME, name, runs_without_gpu(tree, program, call, caught=False))


def _built_by_its_own_method(tree: Tree, program: Program, klass: cst.ClassDef, call: cst.Call) -> bool:
    """`call` builds `klass` inside one of its own instance methods (DARTS' `Network.new()`,
    which copies the model): that runs only on an instance some other call built. The flow
    knows a method's instance parameter (`self_name`); static and class methods have none."""
    function = tree.enclosing(call, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef) or _top_level_class(tree, function) is not klass:
        return False
    info = program.functions.get(id(function))
    return info is not None and info.self_name is not None


def _top_level_class(tree: Tree, function: cst.FunctionDef) -> cst.ClassDef | None:
    block = tree.parent(function)
    klass = tree.parent(block) if isinstance(block, cst.IndentedBlock) else None
    return klass if isinstance(klass, cst.ClassDef) and tree.parent(klass) is tree.module else None


def gpu_only_users(uses: Iterable[Use]) -> dict[str, set[str]]:
    """Per defining file, the names some call reaches and no call reaches without a GPU."""
    runs: set[tuple[str, str]] = set()
    called: set[tuple[str, str]] = set()
    for path, name, can_run in uses:
        called.add((path, name))
        if can_run:
            runs.add((path, name))
    found: dict[str, set[str]] = {}
    for path, name in called - runs:
        found.setdefault(path, set()).add(name)
    return found


class Mentions(NamedTuple):
    """A file's mentions of names other than in imports, inside their own definition, and as
    the function of a call; `bases` apart: `(base, subclass)` for a top-level class's base
    class written by its name (`class HierCondVGNN(HierVGNN)`), which builds the base only where
    the subclass is built."""

    names: frozenset[str]
    bases: frozenset[tuple[str, str]] = frozenset()


def named_elsewhere(source: bytes, names: frozenset[str], known: Mentions | None = None) -> Mentions:
    """The file's mentions of `names` (a class handed to other code, a subclass, `isinstance`):
    who builds it then is not known, unless it is a base class only (`Mentions.bases`).
    `known`: the file's `mentioned_elsewhere`, if already read.

    CPython's own parser reads the file when it can: the project run asks this of every file
    that mentions a name, and a LibCST parse and visit of each cost as much as the analysis."""
    every = known if known is not None else mentioned_elsewhere(source)
    if every is not None:
        return Mentions(every.names & names, frozenset(pair for pair in every.bases if pair[0] in names))
    visitor = _Mentions(names)
    cst.parse_module(source).visit(visitor)  # newer syntax than this Python reads: a base is a mention
    return Mentions(frozenset(visitor.elsewhere))


def _pickers(scope: ast.AST) -> set[int]:
    """The `A if c else B` and `{"a": A, ...}` values (ids) of the assignments of a function
    (`scope`) that bind a local name only ever called (`f(...)`) or, for a dictionary, indexed
    and called (`d[k](...)`) there, at least once: the names they hold are built there, not
    handed over. (A module's names are for any importer to read.)"""
    if not any(isinstance(node, ast.Assign) and _names_only(node.value) for node in ast.walk(scope)):
        return set()
    candidates: dict[str, list[ast.expr]] = {}
    bound: set[str] = set()  # names some other statement binds too: not asked
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(scope):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            assign = parents.get(id(node))
            if isinstance(assign, ast.Assign) and len(assign.targets) == 1 and _names_only(assign.value):
                candidates.setdefault(node.id, []).append(assign.value)
            else:
                bound.add(node.id)
    for name in bound:
        candidates.pop(name, None)
    if not candidates:
        return set()
    kinds = {name: {type(value) for value in values} for name, values in candidates.items()}
    used: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id in candidates and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            outer = parents.get(id(parent)) if parent is not None else None
            if kinds[node.id] == {ast.IfExp}:
                called = isinstance(parent, ast.Call) and parent.func is node
            else:
                called = isinstance(parent, ast.Subscript) and isinstance(outer, ast.Call) and outer.func is parent
            if not called:
                candidates.pop(node.id)
            else:
                used.add(node.id)
    return {id(value) for name, values in candidates.items() if name in used for value in values}


def _names_only(value: ast.expr) -> bool:
    """`A if c else B`, `{"a": A, "b": B}`: a choice among plain names."""
    if isinstance(value, ast.IfExp):
        return isinstance(value.body, ast.Name) and isinstance(value.orelse, ast.Name)
    if isinstance(value, ast.Dict):
        return (
            bool(value.values)
            and all(k is not None for k in value.keys)
            and all(isinstance(v, ast.Name) for v in value.values)
        )
    return False


def mentioned_elsewhere(source: bytes) -> Mentions | None:
    """named_elsewhere for every name at once (None where CPython's parser cannot read the
    file): whether a mention counts never depends on the names asked about, so the engine's
    rounds read each file once. (A call's function is never a mention: of a name asked about
    by the rule, of another name because only the names asked about are kept.)"""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    finder = _AstMentions(None)
    finder.visit(tree)
    return Mentions(frozenset(finder.elsewhere), frozenset(finder.bases))


# Packages whose attributes are their own: `torch.utils.data.Dataset` names PyTorch's class,
# never a project class of the same name (RWKV's `class Dataset(Dataset)` in one sub-project,
# `MMapIndexedDataset(torch.utils.data.Dataset)` in another).
_LIBRARIES = frozenset({"torch", "torchvision", "torchaudio", "torchtext", *HOST_LIBRARIES})


def _library_names(module: str | None, aliases: list[ast.alias], level: int = 0) -> set[str]:
    """The names an import statement binds to a library module or one of its members."""
    if level or (module is not None and module.split(".")[0] not in _LIBRARIES):
        return set()
    if module is not None:
        return {alias.asname or alias.name for alias in aliases}
    return {alias.asname or alias.name.split(".")[0] for alias in aliases if alias.name.split(".")[0] in _LIBRARIES}


class _AstMentions(ast.NodeVisitor):
    """`_Mentions` on CPython's tree: every identifier LibCST holds as a `Name` counts (an
    attribute, a keyword, a parameter, a `global`), the same as there, except a library's
    own attributes and base classes (`torch.utils.data.Dataset`). LibCST's visitor reads only
    the files CPython cannot, where counting more is the careful side."""

    def __init__(self, names: frozenset[str] | None) -> None:
        self.names = names  # None: every name
        self.elsewhere: set[str] = set()
        self.bases: set[tuple[str, str]] = set()
        self.inside: list[str] = []
        self.libraries: set[str] = set()  # names imports bind to library modules (`torch`, `np`)
        self.pickers: set[int] = set()  # choices of classes a call builds (`_pickers`), not mentions

    def _mention(self, identifier: str | None) -> None:
        if (
            identifier is not None
            and (self.names is None or identifier in self.names)
            and identifier not in self.inside
        ):
            self.elsewhere.add(identifier)

    def visit_Import(self, node: ast.Import) -> None:
        self.libraries |= _library_names(None, node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.libraries |= _library_names(node.module or "", node.names, node.level)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for part in (*node.decorator_list, *node.keywords):
            self.visit(part)
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in self.libraries:
                continue  # `class Dataset(Dataset)` after `from torch.utils.data import Dataset`
            if not self.inside and isinstance(base, ast.Name) and base.id != node.name:
                if self.names is None or base.id in self.names:
                    self.bases.add((base.id, node.name))
            else:
                self.visit(base)
        self.libraries.discard(node.name)  # from here on the name is this class
        self._inside(node.name, node.body)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for part in (*node.decorator_list, node.args):
            self.visit(part)  # not its return annotation, which LibCST's visit skips too
        self.pickers |= _pickers(node)
        self._inside(node.name, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _inside(self, name: str, body: list[ast.stmt]) -> None:
        self.inside.append(name)
        for statement in body:
            self.visit(statement)
        self.inside.pop()

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is None or (self.names is not None and name not in self.names):
            self.generic_visit(node)
            return
        if isinstance(func, ast.Attribute):
            self.visit(func.value)
        for part in (*node.args, *node.keywords):
            self.visit(part)  # a call: the engine has its site

    def visit_Name(self, node: ast.Name) -> None:
        self._mention(node.id)

    def visit_Assign(self, node: ast.Assign) -> None:
        # `PointcloudScale = d_utils.PointcloudScale()`: a variable named like the class binds
        # the instance; it hands nothing over (Relation-Shape-CNN's training scripts)
        for target in node.targets:
            if not isinstance(target, ast.Name):
                self.visit(target)
        if id(node.value) in self.pickers:
            if isinstance(node.value, ast.IfExp):
                self.visit(node.value.test)
            return  # `mem_func = RGBMoCo if ... else CMCMoCo`, then `mem_func(...)`: calls
        self.visit(node.value)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not self._of_a_library(node.value):
            self._mention(node.attr)
        self.visit(node.value)

    def _of_a_library(self, value: ast.expr) -> bool:
        """`torch.utils.data` in `torch.utils.data.Dataset`: a chain of attributes on a name an
        import bound to a library."""
        while isinstance(value, ast.Attribute):
            value = value.value
        return isinstance(value, ast.Name) and value.id in self.libraries

    def visit_keyword(self, node: ast.keyword) -> None:
        self._mention(node.arg)
        self.visit(node.value)

    def visit_arg(self, node: ast.arg) -> None:
        self._mention(node.arg)  # not its annotation: a type hint hands no class over

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        # `model_args: ModelArgs = ModelArgs(...)`: the annotation names a type, nothing more
        if not isinstance(node.target, ast.Name):
            self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for identifier in node.names:
            self._mention(identifier)

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._mention(node.name)
        self.generic_visit(node)


class _Mentions(cst.CSTVisitor):
    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.elsewhere: set[str] = set()
        self.inside: list[str] = []

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for part in (*node.decorators, *node.bases, *node.keywords):
            part.visit(self)
        self.inside.append(node.name.value)
        node.body.visit(self)
        self.inside.pop()
        return False  # its own name is not a mention

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for part in (*node.decorators, node.params):
            part.visit(self)
        self.inside.append(node.name.value)
        node.body.visit(self)
        self.inside.pop()
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        name = (
            func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        )
        if name not in self.names:
            return True
        if isinstance(func, cst.Attribute):
            func.value.visit(self)
        for arg in node.args:
            arg.visit(self)
        return False  # a call: the engine has its site

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        return not isinstance(node.target, cst.Name)  # a variable of the same name: no mention

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return False  # `model: Transformer`: a type hint hands no class over

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if not isinstance(node.target, cst.Name):
            node.target.visit(self)
        if node.value is not None:
            node.value.visit(self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names and node.value not in self.inside:
            self.elsewhere.add(node.value)

"""What devfix knows about the other files of one run (spec principle 9).

The files of a run are one program. What a file's analysis learns about the others comes
from a cheap scan of every file's bytes before any file is parsed:

- which files choose the GPUs through the environment (`os.environ["CUDA_VISIBLE_DEVICES"]
  = args.gpu`), and the names of the functions that do it (`auto_select_gpu`). CUDA reads
  that variable once, when it is first queried, so a device declaration that runs before
  the program's own choice (at import time, or before a call to such a function) would
  make CUDA choose first.

The scan over-approximates on purpose (a mention is enough, a function is known by its
name): it only ever stops a declaration, never adds an edit.

- which top-level functions of a script folder nothing in the run refers to: no call, no
  callback, no string names them (`unreferenced`). Such a function never runs, so a
  hard-coded `.cuda()` in it crashes nothing (reach.py); a package's functions are its API
  and are always taken to run.

- which project file an import names (imports.py), and which files need the CUDA runtime as
  soon as they are imported (extensions.py). The files are analysed
  imported-first (`analysis_order`), and each leaves a summary (linking.py) that its importers'
  analyses read: one pass per file, plus this linking.
"""

from __future__ import annotations

import os
import re
import weakref
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

from devfix.analysis.callers import COMMENT, WORD, Passed, code_words, passed_arguments
from devfix.analysis.extensions import builds_cuda_on_import, cuda_extension_names, imports_gpu_package
from devfix.analysis.imports import (
    IMPORT,
    ProjectIndex,
    dotted,
    import_components,
    import_statements,
    imported_modules,
    imports_any,
    module_attributes,
)
from devfix.analysis.linking import Export, Linker, ModuleSummary
from devfix.analysis.torch_api import NN_MODULE_METHODS

GPU_CHOICE_TEXT = b"CUDA_VISIBLE_DEVICES"
_DEF = re.compile(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")
_INDENTED_DEF = re.compile(rb"^([ \t]+)(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_TOP_LINE = re.compile(rb"^[^ \t\n\x0b\x0c#][^\n]*", re.MULTILINE)  # not blank, not indented, not a comment
_TOP_NAME = re.compile(rb"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)
_TOP_DEF = re.compile(rb"^(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_CLASS = re.compile(rb"class[ \t]+(\w+)[ \t]*(?:\(([^()]*)\))?[ \t]*:")
_TOP_CLASS = re.compile(rb"^class[ \t]+(\w+)[ \t]*(?:\(([^()]*)\))?[ \t]*:", re.MULTILINE)
_MODULE_BASES = frozenset({b"nn.Module", b"torch.nn.Module", b"Module"})
# Functions some tool runs by their name alone: pytest's hooks and set-ups, dunders; and, in
# the files pytest collects (`test_*.py`, `*_test.py`), its tests. A `test_epoch()` of a
# `train.py` is the project's own evaluation helper: only a call runs it (GraphRNN's train.py).
_RUN_BY_NAME = re.compile(r"^(pytest_|setup|teardown|__)")
_TEST_BY_NAME = re.compile(r"^test")
_PYTEST_FILE = re.compile(r"(?:^|[/\\])(?:test_[^/\\]*|[^/\\]*_test|conftest)\.py$")
# A file that reaches its functions by a name computed at run time: `fire.Fire()` makes each a
# command, `globals()[name]`, `eval(...)`, `getattr(sys.modules[__name__], name)`.
_DYNAMIC_LOOKUP = re.compile(
    rb"\bFire\(|(?<![\w.])(?:globals|locals|eval|exec)\(|(?<![\w.])vars\(\s*\)|sys\.modules\[__name__\]"
)  # `vars(args)` reads an object's attributes; only a bare `vars()` is the namespace
_DYNAMIC_TEXT = (b"Fire(", b"globals(", b"locals(", b"vars(", b"eval(", b"exec(", b"sys.modules[__name__]")


def _looks_up_by_name(data: bytes) -> bool:
    """_DYNAMIC_LOOKUP, with a plain substring test first: the regex tries its alternatives at
    every position of every file, and most files contain none of the words."""
    return any(text in data for text in _DYNAMIC_TEXT) and _DYNAMIC_LOOKUP.search(data) is not None


@dataclass(frozen=True)
class ProjectView:
    """What the run's other files tell one file's analysis before any of them is parsed."""

    unreferenced: frozenset[str] = frozenset()  # its top-level functions nothing in the run refers to
    missing_modules: frozenset[str] = frozenset()  # project modules it imports that do not exist
    gpu_only_users: frozenset[str] = frozenset()  # its top-level classes and functions only GPU-only code uses
    imports_cuda_extension: bool = False  # it imports a CUDA extension the run builds: it needs a GPU
    callers_pass: dict[str, Passed] = field(default_factory=dict)  # its functions -> what every call passes
    named_elsewhere: frozenset[str] = frozenset()  # its top-level classes and functions other files name
    cuda_extensions: frozenset[str] = frozenset()  # modules a setup script of the run builds with CUDAExtension
    named_by: dict[str, frozenset[str]] = field(default_factory=dict)  # those names -> the files that name them
    methods: frozenset[str] = frozenset()  # names the run's files define as methods
    # a module class of the run keeps a tensor it put on the GPU as a plain attribute
    # (`self.weights = Variable(torch.randn(k).cuda(), requires_grad=True)`): `.cuda()` on a
    # model loaded whole on the CPU would leave such a tensor there
    plain_gpu_tensors: bool = False


@dataclass(frozen=True)
class ProjectFacts:
    gpu_choice_files: frozenset[str] = frozenset()  # display paths of files that mention the variable
    gpu_choice_functions: frozenset[str] = frozenset()  # names of functions whose body mentions it
    index: ProjectIndex | None = None
    summaries: dict[str, ModuleSummary] = field(default_factory=dict)  # filled as files are analysed
    unreferenced: dict[str, frozenset[str]] = field(default_factory=dict)  # display path -> dead top-level functions
    components: dict[str, int] = field(default_factory=dict)  # display path -> its group of files linked by imports
    gpu_only: dict[str, frozenset[str]] = field(default_factory=dict)  # filled by the engine (users.py)
    missing: dict[str, frozenset[str]] = field(default_factory=dict)  # display path -> missing imports, once per file
    cuda_extensions: frozenset[str] = frozenset()  # modules a setup script of the run builds with CUDAExtension
    # files that compile CUDA code when imported (`cpp_extension.load`), and the files importing
    # them at their top, directly or not: none of them can run without a GPU
    builds_cuda_on_import: frozenset[str] = frozenset()
    unparseable: set[str] = field(default_factory=set)  # display paths of files with a syntax error (engine.py)
    passed: dict[str, dict[str, Passed]] = field(default_factory=dict)  # display path -> what calls pass its functions
    named_by: dict[str, dict[str, frozenset[str]]] = field(
        default_factory=dict
    )  # display path -> its top-level names other files name -> those files
    methods: frozenset[str] = frozenset()  # names the run's files define as methods (several files only)
    plain_gpu_tensors: bool = False  # see ProjectView.plain_gpu_tensors

    def chooses_gpus_elsewhere(self, path: str) -> bool:
        """Another file of the program `path` belongs to (the files linked to it by imports,
        either way) may set CUDA_VISIBLE_DEVICES. A script of another sub-project in the same
        repository runs in another process."""
        group = self.components.get(path)
        return any(
            other != path and (group is None or self.components.get(other, group) == group)
            for other in self.gpu_choice_files
        )

    @classmethod
    def from_files(cls, files: list[tuple[str, bytes]]) -> ProjectFacts:
        paths: set[str] = set()
        functions: set[str] = set()
        for path, data in files:
            if GPU_CHOICE_TEXT in data:
                paths.add(path)
                functions |= functions_choosing_gpus(data)
        index = ProjectIndex([path for path, _ in files])
        index.add_search_paths(files)
        components = import_components(files, index) if paths else {}
        extensions = cuda_extension_names(files)
        defined = script_functions(files, index) if len(files) > 1 or _notebook(files) else {}
        return cls(
            frozenset(paths),
            frozenset(functions),
            index,
            unreferenced=unreferenced_functions(files, index, defined),
            components=components,
            cuda_extensions=extensions,
            passed=callers_pass(files, index, defined),
            named_by=named_in_other_files(files),
            builds_cuda_on_import=builds_cuda_on_import(files, index),
            methods=frozenset().union(*(defined_methods(data) for _, data in files)) if len(files) > 1 else frozenset(),
            plain_gpu_tensors=any(keeps_plain_gpu_tensors(data) for _, data in files),
        )

    def elsewhere(self, path: str) -> frozenset[str]:
        """The top-level names of `path` that other files of the run name."""
        return frozenset(self.named_by.get(path, {}))

    def view(self, path: str, data: bytes) -> ProjectView:
        """A file may be analysed up to three times (its callers' arguments, its GPU-only
        users): the filesystem is asked about its imports once."""
        if path not in self.missing:
            index = self.index
            self.missing[path] = (
                index.missing_imports(path, data) | index.imports_of(path, data, self.unparseable)
                if index is not None and index.several
                else frozenset()
            )
        return ProjectView(
            self.unreferenced.get(path, frozenset()),
            self.missing[path],
            self.gpu_only.get(path, frozenset()),
            imports_any(data, self.cuda_extensions) or imports_gpu_package(data) or path in self.builds_cuda_on_import,
            self.passed.get(path, {}),
            self.elsewhere(path),
            self.cuda_extensions,
            self.named_by.get(path, {}),
            self.methods,
            self.plain_gpu_tensors or keeps_plain_gpu_tensors(data),
        )

    def imports_analysed(self, path: str, data: bytes) -> bool:
        """`path` imports a project file analysed already (a helper module that never names
        torch but calls one that asks for the GPU): its own summary carries that on."""
        if self.index is None or not self.summaries:
            return False
        return any(imported in self.summaries for imported in self.index.imports(path, data))

    def linker(self, path: str) -> Linker | None:
        """What the imports of `path` bind, from the summaries of the files analysed so far."""
        index = self.index
        if index is None or not index.several:
            return None

        def link(module: str | None, level: int, name: str | None) -> Export | None:
            return index.lookup(self.summaries, path, module, level, name)

        return link

    def analysis_order(self, files: list[tuple[str, bytes]]) -> list[int]:
        """Indices of `files`, each after the project files it imports (cycles broken where
        met, in the given order): an importer's analysis reads its imports' summaries."""
        if self.index is None:
            return list(range(len(files)))
        return _depth_first(self._needs(files))

    def groups(self, files: list[tuple[str, bytes]]) -> list[list[int]]:
        """The files as groups linked by imports (either way, directly or through others),
        each in analysis order, the groups in the order of their first file. An analysis reads
        the summaries of its own group only, so groups can be analysed apart (--jobs)."""
        if self.index is None:
            return [[i] for i in range(len(files))]
        needs = self._needs(files)
        parent = list(range(len(files)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for i, imported in enumerate(needs):
            for j in imported:
                parent[root(j)] = root(i)
        found: dict[int, list[int]] = {}
        for i in _depth_first(needs):
            found.setdefault(root(i), []).append(i)
        return sorted(found.values(), key=min)

    def _needs(self, files: list[tuple[str, bytes]]) -> list[list[int]]:
        assert self.index is not None
        position = {path: i for i, (path, _) in enumerate(files)}
        return [
            [position[p] for p in self.index.imports(path, data) if p in position and p != path] for path, data in files
        ]


def _depth_first(needs: list[list[int]]) -> list[int]:
    """Indices, each after the ones it needs (cycles broken where met, in index order)."""
    order: list[int] = []
    state = [0] * len(needs)  # 0 new, 1 on the stack, 2 done
    for start in range(len(needs)):
        stack = [(start, iter(needs[start]))]
        if state[start]:
            continue
        state[start] = 1
        while stack:
            node, pending = stack[-1]
            nxt = next(pending, None)
            if nxt is None:
                stack.pop()
                state[node] = 2
                order.append(node)
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(needs[nxt])))
    return order


_DEF_NAME = re.compile(rb"\bdef[ \t]+(\w+)")


def unreferenced_functions(
    files: list[tuple[str, bytes]], index: ProjectIndex, defined: dict[str, list[tuple[str, bytes]]] | None = None
) -> dict[str, frozenset[str]]:
    """For each file outside a package, its top-level functions whose name is written nowhere
    in the run but in `def` lines: no call, no callback, no string names them
    (`getattr(m, "train")`, `__all__`, an entry point all count; so does `helpers.train()`
    anywhere, but not another script's bare `train()` when that script defines its own copy).
    A lone file is not a run of a project: its importers are unknown. A notebook has none."""
    if len(files) < 2 and not any(path.endswith(".ipynb") for path, _ in files):
        return {}
    defined = script_functions(files, index) if defined is None else defined
    # `# create_submission(model)`, a call commented out or quoted out, is no use
    codes = [(path, data, code_words(data)) for path, data in files]
    definitions: Counter[bytes] = Counter()
    for _path, _data, code in codes:
        definitions.update(_DEF_NAME.findall(code))
    wanted = {name for names in defined.values() for _, name in names}
    if not wanted:
        return {path: methods for path, methods in _unused_class_methods(files, defined, index).items() if methods}
    counts: Counter[bytes] = Counter()
    # A method's name is common English ("# load dataset") and a module's function name
    # (`torch.load`): for methods, neither counts.
    method_counts: Counter[bytes] = Counter()
    for _path, _data, code in codes:
        written = [word for word in WORD.findall(code) if word in wanted]
        counts.update(written)
        method_counts.update(written)
        modules = imported_modules(code) if written else None
        if modules:
            method_counts.subtract(name for name in module_attributes(code, modules) if name in wanted)
    own = {path: _own_uses(code, {n for n in _TOP_DEF.findall(data) if n in wanted}) for path, data, code in codes}
    everyone: Counter[bytes] = Counter()  # the uses of every file's own copy, summed once (not per file: quadratic)
    for uses in own.values():
        everyone.update(uses)
    found = {
        path: frozenset(
            key
            for key, n in names
            if (method_counts if "." in key else counts)[n]
            == definitions[n] + (0 if "." in key else everyone[n] - own[path][n])
        )
        for path, names in defined.items()
    }
    for path, methods in _unused_class_methods(files, defined, index).items():
        found[path] = found.get(path, frozenset()) | methods
    return {path: names for path, names in found.items() if names}


# Names built at run time anywhere in the run (`models.__dict__[args.arch]`, `getattr(m, name)`):
# any class may be the one they pick.
_ANY_DYNAMIC_LOOKUP = re.compile(
    rb"__dict__\[|\bgetattr\(|\bimportlib\b|\bimport_module\(|\bregistry\b|\bregister\b", re.IGNORECASE
)


_ANY_DYNAMIC_TEXT = (b"__dict__[", b"getattr(", b"importlib", b"import_module(", b"regist")


def _looks_up_anything(code: bytes) -> bool:
    """_ANY_DYNAMIC_LOOKUP, with plain substring tests on the lowered text first (cheap)."""
    lowered = code.lower()
    return any(text in lowered for text in _ANY_DYNAMIC_TEXT) and _ANY_DYNAMIC_LOOKUP.search(code) is not None


# A module imported by a name built at run time: any file of the run may be the one.
_IMPORTS_BY_NAME = re.compile(rb"\bimportlib\b|\bimport_module\(|\b__import__\(")


def _imports_by_name(code: bytes) -> bool:
    return (b"importlib" in code or b"import_module(" in code or b"__import__(" in code) and (
        _IMPORTS_BY_NAME.search(code) is not None
    )


def _unused_class_methods(
    files: list[tuple[str, bytes]], scripts: dict[str, list[tuple[str, bytes]]], index: ProjectIndex | None = None
) -> dict[str, frozenset[str]]:
    """Every method of a script's top-level closed class (its bases `object`, `nn.Module` or the
    project's own) whose name no file that can import it writes outside its `class` line and
    comments (an old experiment's `FeatureExtractionTest`): nothing builds it, so none of its
    code runs, `__init__` included. The files that can import it are its own and those whose
    imports reach it (`visible_from`): a sub-project's copy of `common/policy_networks.py` is
    not used by the other sub-project's scripts that name the same class. Not when one of those
    files looks names up at run time, where a configuration's string may pick it, nor when any
    file of the run imports modules by a computed name."""
    closed = _closed_classes(files)  # another framework may find a subclass of its own by itself
    classes = {
        path: [
            (name, bases)
            for name, bases in _TOP_CLASS.findall(data)
            if (name in closed or _torch_bases(bases)) and not name.startswith(b"Test")
        ]
        for path, data in files
        if path in scripts
    }
    wanted = {name for found in classes.values() for name, _ in found}
    if not wanted:
        return {}
    codes = {path: COMMENT.sub(b"", data) for path, data in files}
    if any(_imports_by_name(code) for code in codes.values()):
        return {}  # a module imported by a computed name may be any file's
    data_of = dict(files)
    written: dict[str, Counter[bytes]] = {}
    dynamic: dict[str, bool] = {}
    own_lookup: dict[str, bool] = {}
    for path, data in files:
        code = codes[path]
        written[path] = Counter(word for word in WORD.findall(code) if word in wanted)
        # its own classes, by a computed name: `globals()[name]`, `eval(name)` (a `getattr(det, k)`
        # on an object reaches that object's attributes only)
        own_lookup[path] = _looks_up_by_name(data)
        dynamic[path] = own_lookup[path] or _looks_up_anything(code)
    seers = visible_from(files, index) if index is not None else None
    libraries = _library_folders(files, index) if index is not None else set()
    unused: dict[str, frozenset[str]] = {}
    for path, found in classes.items():
        if not found:
            continue
        readers = seers.get(path, set()) if seers is not None else set(data_of) - {path}
        if own_lookup[path] or _reached_by_lookup(path, readers, dynamic, data_of, index):
            continue
        # a model zoo's other file (models/LSTM_Attn.py beside the imported models/LSTM.py): its
        # modules are the user's pick (an old experiment's plain class there is still dead)
        zoo = not readers and os.path.dirname(path) in libraries
        dead = {
            name
            for name, bases in found
            if not (zoo and (closed.get(name) or _torch_bases(bases)))
            and not any(written[reader][name] for reader in readers)
            and not named_in_own_file(data_of[path], name.decode())
        }
        if dead:
            unused[path] = frozenset(
                key for key, _ in _closed_methods(data_of[path], dict.fromkeys(dead, False), every=True)
            )
    return unused


def _library_folders(files: list[tuple[str, bytes]], index: ProjectIndex) -> set[str]:
    """The folders other folders' files import from (`from models.LSTM import LSTMClassifier`
    in main.py): a file there that nothing imports is one of the alternatives a user picks
    by editing an import, not dead code."""
    found = set()
    for path, data in files:
        here = os.path.dirname(path)
        for target in index.imports(path, data):
            folder = os.path.dirname(target)
            if folder != here:
                found.add(folder)
    return found


def _torch_bases(bases: bytes) -> bool:
    """Every base is torch's (`torch.autograd.Function`, `nn.Module`, `nn.Sequential`): torch
    reaches such a class only through the code that names it (`RankSort.apply(...)`)."""
    listed = [b.strip() for b in bases.split(b",") if b.strip()]
    return bool(listed) and all(
        base.startswith((b"torch.", b"nn.")) or base in (b"Function", b"Module") for base in listed
    )


def _reached_by_lookup(
    path: str, readers: set[str], dynamic: dict[str, bool], data_of: dict[str, bytes], index: ProjectIndex | None
) -> bool:
    """A reader that looks names up at run time can reach the file's classes only through a
    namespace that holds them all: the module itself (`import utils.loss`) or a star import.
    `from utils.loss import ComputeLoss` puts one name in the reader's namespace, which its
    text names anyway."""
    if not any(dynamic[reader] for reader in readers):
        return False
    if index is None:
        return True
    return any(path in _wholes(reader, data_of[reader], index) for reader in readers)


_WHOLES: weakref.WeakKeyDictionary[ProjectIndex, dict[str, frozenset[str]]] = weakref.WeakKeyDictionary()


def _wholes(importer: str, data: bytes, index: ProjectIndex) -> frozenset[str]:
    """The run's files `importer` binds whole (`import a.b`, `from a import b`, `from a.b import
    *`), once per importer."""
    known = _WHOLES.setdefault(index, {})
    if importer not in known:
        known[importer] = frozenset(_imports_whole(importer, data, index))
    return known[importer]


def _imports_whole(importer: str, data: bytes, index: ProjectIndex) -> set[str]:
    """The run's files `importer` binds as a module, or all of whose names it imports."""
    candidates: list[tuple[str | None, int]] = []
    for level, module, imported, plain in import_statements(data):
        if plain is not None:
            candidates += [(name, 0) for name in plain]
            continue
        if "*" in imported or not imported:
            candidates.append((module or None, level))
        candidates += [(name, level) for name in dotted(module, [n for n in imported if n != "*"])]
    found = {index.resolve(importer, name, level) for name, level in candidates}
    return {target for target in found if target is not None}


def visible_from(files: list[tuple[str, bytes]], index: ProjectIndex) -> dict[str, set[str]]:
    """For each file, the files whose imports reach it, directly or through others (its
    package's `__init__.py`, a star import), and the files with an import that names its
    module and that devfix cannot resolve to a module file (none, or a package's
    `__init__.py`): every file that may use its classes."""
    importers: dict[str, set[str]] = {}
    unresolved: dict[str, set[str]] = {}  # a module name's last part -> files that import it unresolved
    for path, data in files:
        resolved = index.imports(path, data)
        for imported in resolved:
            importers.setdefault(imported, set()).add(path)
        # a package's `__init__.py` found for `from solver import Solver` may not be what runs:
        # the scripts may put `src/solver/` itself on the path, so its solver.py may be meant
        stems = {_stem(found) for found in resolved if not found.endswith("__init__.py")}
        for match in IMPORT.finditer(data):
            for word in WORD.findall(b" ".join(group for group in match.groups() if group)):
                name = word.decode("ascii", "replace")
                if name not in stems:
                    unresolved.setdefault(name, set()).add(path)
    found: dict[str, set[str]] = {}
    for path, _ in files:
        seen = set(unresolved.get(_stem(path), set()))
        todo = [path, *seen]
        while todo:
            for importer in importers.get(todo.pop(), ()):
                if importer not in seen:
                    seen.add(importer)
                    todo.append(importer)
        found[path] = seen
    return found


def _notebook(files: list[tuple[str, bytes]]) -> bool:
    """A notebook is in the run: nothing imports it, so its own text shows every use."""
    return any(path.endswith(".ipynb") for path, _ in files)


def _stem(path: str) -> str:
    """The name a module is imported by: `policy_networks` for common/policy_networks.py, the
    package's for an `__init__.py`."""
    folder, base = os.path.split(path)
    return os.path.basename(folder) if base == "__init__.py" else base.rsplit(".", 1)[0]


def _own_uses(data: bytes, names: set[bytes]) -> Counter[bytes]:
    """How often the file names its own top-level functions `names` without a dot (`train(...)`
    where it defines `def train`): uses of its own copy, not of another script's function of
    the same name. A name it also imports may be the other file's: not counted."""
    uses: Counter[bytes] = Counter()
    if not names:
        return uses
    imported = {
        word for match in IMPORT.finditer(data) for group in match.groups() if group for word in WORD.findall(group)
    }
    # the names alone, as whole words not after a dot, found by `bytes.find` (a file defines a
    # few functions; a regex built per file cost more to compile than to run)
    for name in names:
        if name in imported:
            continue
        start = data.find(name)
        while start != -1:
            end = start + len(name)
            if (
                (start == 0 or not _continues_name(data[start - 1]))
                and (end == len(data) or not _continues_name(data[end], dot=False))
                and not data[max(0, start - 4) : start].rstrip().endswith(b"def")
            ):
                uses[name] += 1
            start = data.find(name, end)
    return uses


def _continues_name(byte: int, dot: bool = True) -> bool:
    """The byte continues a name (an ASCII letter, digit or `_`, as `\\w` of a bytes pattern), or,
    with `dot`, is a `.`."""
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or (dot and byte == 46)


def named_in_other_files(files: list[tuple[str, bytes]]) -> dict[str, dict[str, frozenset[str]]]:
    """For each file, its top-level classes and functions whose name another file of the run
    writes (an import, a call, a string), with those files: callers this file's analysis
    does not see."""
    if len(files) < 2:
        return {}
    defined = {path: top_level_names(data) for path, data in files}
    wanted = set().union(*defined.values())
    if not wanted:
        return {}
    seen_in: dict[bytes, set[str]] = {}
    for path, data in files:
        for word in set(WORD.findall(data)) & wanted:
            seen_in.setdefault(word, set()).add(path)
    found = {
        path: {
            n.decode("ascii", "replace"): frozenset(seen_in[n] - {path})
            for n in names
            if seen_in.get(n, set()) - {path}
        }
        for path, names in defined.items()
    }
    return {path: names for path, names in found.items() if names}


def top_level_names(data: bytes) -> set[bytes]:
    """The names of the file's top-level `def` and `class` statements, read off its text."""
    return set(_TOP_NAME.findall(data))


_METHOD = re.compile(rb"^[ \t]+def[ \t]+(\w+)", re.MULTILINE)


def defined_methods(data: bytes) -> set[str]:
    """The names a file defines in an indented `def` (methods, mostly): a method of that name
    called on a module of unknown class (`model.module.serialize(...)`) may be the project's
    own, not a forward pass."""
    return {name.decode("ascii", "replace") for name in _METHOD.findall(data)}


_PLAIN_GPU_TENSOR = re.compile(rb"^[ \t]+self\.\w+[ \t]*=[^\n]*\.(?:cuda|to)\(", re.MULTILINE)


def keeps_plain_gpu_tensors(data: bytes) -> bool:
    """A method of the file writes `self.x = ....cuda(...)` or `....to(...)` (darts' architecture
    weights, also once devfix has fixed them): maybe a plain tensor attribute of a module on the
    GPU, which `.cuda()` of the module does not move."""
    return (b".cuda(" in data or b".to(" in data) and _PLAIN_GPU_TENSOR.search(data) is not None


def named_in_own_file(data: bytes, name: str) -> bool:
    """The file writes `name` outside its own top-level `def`/`class` block (a call of it from
    another function, a `__main__` block): a use of it in this file."""
    token = name.encode()
    word = re.compile(rb"\b" + re.escape(token) + rb"\b")
    inside = False
    for line in COMMENT.sub(b"", data).splitlines():
        if line[:1].strip():
            match = _TOP_NAME.match(line)
            inside = match is not None and match.group(1) == token
            if inside:
                continue
        if not inside and word.search(line):
            return True
    return False


def script_functions(files: list[tuple[str, bytes]], index: ProjectIndex) -> dict[str, list[tuple[str, bytes]]]:
    """For each file outside an installed library that looks nothing up by a computed name, its
    top-level functions and the methods of its closed classes, as ("train", b"train") and
    ("GAN.load", b"load"): code whose every use the run's text shows. Tests and dunders run by name."""
    defined: dict[str, list[tuple[str, bytes]]] = {}
    closed = _closed_classes(files)
    for path, data in files:
        if path.endswith((".py", ".ipynb")) and not index.in_library(path) and not _looks_up_by_name(data):
            names = [(n.decode("ascii", "replace"), n) for n in _TOP_DEF.findall(data)] + _closed_methods(data, closed)
            by_name = _RUN_BY_NAME.match if not _PYTEST_FILE.search(path) else _runs_as_a_test
            defined[path] = [(key, n) for key, n in names if not by_name(n.decode("ascii", "replace"))]
    return defined


def _runs_as_a_test(name: str) -> bool:
    return bool(_RUN_BY_NAME.match(name) or _TEST_BY_NAME.match(name))


def callers_pass(
    files: list[tuple[str, bytes]], index: ProjectIndex, defined: dict[str, list[tuple[str, bytes]]] | None = None
) -> dict[str, dict[str, Passed]]:
    """For each script file, what the run's calls pass its functions (callers.py), for the
    functions whose every use is a plain call. A lone file is not a run: its callers are unknown."""
    if len(files) < 2:
        return {}
    defined = script_functions(files, index) if defined is None else defined
    passed = passed_arguments(files, frozenset(name for names in defined.values() for _, name in names))
    found = {path: {key: passed[name] for key, name in names if name in passed} for path, names in defined.items()}
    return {path: keys for path, keys in found.items() if keys}


def _closed_classes(files: list[tuple[str, bytes]]) -> dict[bytes, bool]:
    """The run's top-level classes whose every base is `object`, `nn.Module` or another such
    class of the run (every definition of its name such a class, alike), each with whether `nn.Module` is among its ancestors. Only
    the program (and, for a module, torch by the names of `nn.Module`'s own methods) calls their
    methods: a gym environment's `step`, a test case's `setUp`, a Lightning module's hooks are
    called by frameworks devfix does not know, so their classes are not closed."""
    bases: dict[bytes, list[list[bytes]]] = {}
    for _, data in files:
        for match in _TOP_CLASS.finditer(data):
            listed = [b.strip() for b in (match.group(2) or b"").split(b",") if b.strip()]
            bases.setdefault(match.group(1), []).append(listed)
    closed: dict[bytes, bool | None] = {}

    def module_based(listed: list[bytes], seen: frozenset[bytes]) -> bool | None:
        module = False
        for base in listed:
            if base in _MODULE_BASES:
                module = True
            elif base != b"object":
                inner = project_class(base, seen)
                if inner is None:
                    return None
                module = module or inner
        return module

    def project_class(name: bytes, seen: frozenset[bytes]) -> bool | None:
        if name not in closed:
            definitions = bases.get(name, [])
            if not definitions or name in seen:
                closed[name] = None
            else:
                # the copies of one class in two sub-projects (each with its `common/`): closed
                # when every copy is, alike
                verdicts = {module_based(listed, seen | {name}) for listed in definitions}
                closed[name] = verdicts.pop() if len(verdicts) == 1 else None
        return closed[name]

    return {name: known for name in bases if (known := project_class(name, frozenset())) is not None}


def _closed_methods(data: bytes, closed: dict[bytes, bool], *, every: bool = False) -> list[tuple[str, bytes]]:
    """The methods of the file's top-level closed classes (`class GAN(object):`, a model whose
    bases are the project's own modules), as ("GAN.load", b"load"): one whose name is written
    nowhere else never runs. A module's methods named like `nn.Module`'s (`forward`, `train`)
    are torch's to call; a file that calls `getattr` may reach any method by a computed name."""
    if b"getattr(" in data and not every:
        return []
    if not any(name in closed for name, _ in _TOP_CLASS.findall(data)):
        return []  # no closed class: no line to read one by one
    return [
        (f"{owner.decode('ascii', 'replace')}.{method.decode('ascii', 'replace')}", method)
        for method, owner in indented_defs(data)
        if owner in closed and not (closed[owner] and method.decode("ascii", "replace") in NN_MODULE_METHODS)
    ]


def indented_defs(data: bytes) -> list[tuple[bytes, bytes | None]]:
    """Every indented `def` of the file with the top-level class it is a method of, or None (a
    function nested in a function or a method, a method of a nested class). The owner of an
    indented `def` is the last top-level line above it, and a method sits at the indentation of
    that class's first `def` (the regexes read the whole file at once: most of its lines are
    never looked at in Python)."""
    text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")  # lines as `splitlines` cuts them
    tops = [(match.start(), match.group(0)) for match in _TOP_LINE.finditer(text)]
    starts = [start for start, _ in tops]
    indents: dict[int, bytes] = {}  # top-level line -> the indentation of the first def below it
    found: list[tuple[bytes, bytes | None]] = []
    for match in _INDENTED_DEF.finditer(text):
        above = bisect_right(starts, match.start()) - 1
        head = _CLASS.match(tops[above][1]) if above >= 0 else None
        if head is None:
            found.append((match.group(2), None))
            continue
        indent = indents.setdefault(above, match.group(1))
        found.append((match.group(2), head.group(1) if match.group(1) == indent else None))
    return found


def top_level_defs(data: bytes) -> list[bytes]:
    """The names of the file's top-level functions."""
    return _TOP_DEF.findall(data)


def functions_choosing_gpus(data: bytes) -> set[str]:
    """Names of the functions (by indentation) whose body mentions CUDA_VISIBLE_DEVICES."""
    found: set[str] = set()
    open_defs: list[tuple[int, str]] = []
    for line in data.splitlines():
        stripped = line.lstrip()
        if not stripped or stripped.startswith(b"#"):
            continue
        indent = len(line) - len(stripped)
        while open_defs and open_defs[-1][0] >= indent:
            open_defs.pop()
        match = _DEF.match(line)
        if match:
            open_defs.append((indent, match.group(2).decode("ascii", "replace")))
        elif GPU_CHOICE_TEXT in line:
            found.update(name for _, name in open_defs)
    return found

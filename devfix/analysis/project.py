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

- which top-level functions of a script folder nothing in the run refers to, and which
  methods of classes nothing builds (`unreferenced`, unused.py): they never run, so a
  hard-coded `.cuda()` there crashes nothing (reach.py).

- which project file an import names (imports.py), and which files need the CUDA runtime as
  soon as they are imported (extensions.py). The files are analysed
  imported-first (`analysis_order`), and each leaves a summary (linking.py) that its importers'
  analyses read: one pass per file, plus this linking.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from devfix.analysis.callers import WORD, Passed, passed_arguments
from devfix.analysis.extensions import builds_cuda_on_import, cuda_extension_names, imports_gpu_package
from devfix.analysis.imports import (
    ProjectIndex,
    imports_any,
    reached_from,
)
from devfix.analysis.linking import GPU_ON_IMPORT, Export, Linker, ModuleSummary
from devfix.analysis.text import has_notebook, indented_defs, top_level_names
from devfix.analysis.torch_api import GPU_ONLY_CALLS
from devfix.analysis.unused import (
    script_functions,
    script_paths,
    stale_copies,
    unused_class_methods,
    unused_functions,
    visible_from,
)
from devfix.analysis.values import Kind, Place, Value

GPU_CHOICE_TEXT = b"CUDA_VISIBLE_DEVICES"
# `multiprocessing.Pool(...)`, `mp.Process(target=...)` with the default start method (`fork`
# on Linux), in a file that never asks for `spawn` (`torch.multiprocessing.spawn`,
# `set_start_method("spawn")`, whose children start afresh).
_WORKERS = re.compile(rb"\b(?:Pool|Process)\s*\(")


def forks_workers(data: bytes) -> bool:
    """The file starts worker processes with `multiprocessing` by forking (see `_WORKERS`)."""
    return b"multiprocessing" in data and b"spawn" not in data and _WORKERS.search(data) is not None


def shares_a_process_with(files: list[tuple[str, bytes]], index: ProjectIndex, choosers: set[str]) -> frozenset[str]:
    """The files that may run in one process with a file of `choosers` other than themselves:
    both are among the files one script loads, itself and its imports, directly or not. Two
    scripts that import one helper module run in two processes: GraphRNN's `main.py` picks its
    GPU itself, whatever `main_DeepGMG.py` sets, though both import `train.py`."""
    if not choosers:
        return frozenset()
    data_of = dict(files)
    imports = {path: [i for i in index.imports(path, data) if i in data_of] for path, data in files}
    importers: dict[str, list[str]] = {}
    for path, imported in imports.items():
        for other in imported:
            importers.setdefault(other, []).append(path)
    found: set[str] = set()
    for chooser in choosers:
        if chooser not in data_of:
            continue
        # every script that loads the chooser, then every file those scripts load
        loaders = reached_from([chooser], importers)
        found |= reached_from(sorted(loaders), imports) - {chooser}
    return frozenset(found)


def forked_after(files: list[tuple[str, bytes]], index: ProjectIndex, forks: set[str]) -> frozenset[str]:
    """The files that fork workers and every file their imports load, directly or not: the
    top-level code of each runs in the forking process before its workers are forked. A
    script that only shares a helper module with them runs in a process of its own."""
    if not forks:
        return frozenset()
    data_of = dict(files)
    found = set(forks)
    todo = list(forks)
    while todo:
        path = todo.pop()
        for imported in index.imports(path, data_of[path]):
            if imported in data_of and imported not in found:
                found.add(imported)
                todo.append(imported)
    return frozenset(found)


_DEF = re.compile(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+(\w+)")


class Pending(Protocol):
    """A result another process is computing (parallel.TextScans): `.result()` waits for it."""

    def result(self) -> NameScans: ...


@dataclass(frozen=True)
class NameScans:
    """The half of the run's text scans that reads who names what (ProjectFacts.from_files)."""

    unused_methods: dict[
        str, frozenset[str]
    ]  # display path -> methods of its classes nothing builds, stale copies' code
    named_by: dict[str, dict[str, frozenset[str]]]
    cuda_extensions: frozenset[str]
    builds_cuda_on_import: frozenset[str]
    methods: frozenset[str]
    plain_gpu_tensors: bool
    own_cuda_objects: bool
    savers: frozenset[str]  # display paths of the files that write `torch.save(`
    scripts_modules: bool  # some file compiles code with `torch.jit.script(...)`
    init_only_methods: frozenset[str]  # methods every call of which is `self.name(...)` in an `__init__`
    cpu_saved_names: frozenset[str]  # checkpoint file names only files that place nothing save


def name_scans(files: list[tuple[str, bytes]], index: ProjectIndex, several: bool) -> NameScans:
    """The half of the scans that may be read in another process (name_scans_apart)."""
    seers = visible_from(files, index) if several else {}
    unused = unused_class_methods(files, script_paths(files, index), index, seers) if several else {}
    for path, keys in stale_copies(files, index).items():
        unused[path] = unused.get(path, frozenset()) | keys
    return NameScans(
        unused,
        named_in_other_files(files),
        cuda_extension_names(files),
        builds_cuda_on_import(files, index),
        frozenset().union(*(defined_methods(data) for _, data in files)) if len(files) > 1 else frozenset(),
        any(keeps_plain_gpu_tensors(data) for _, data in files),
        any(defines_own_cuda_object(data) for _, data in files),
        frozenset(path for path, data in files if b"torch.save(" in data),
        any(b"jit.script(" in data for _, data in files),
        methods_called_only_in_init(files) if several else frozenset(),
        cpu_saved_names(files) if several else frozenset(),
    )


def name_scans_apart(files: list[tuple[str, bytes]]) -> NameScans:
    """name_scans in a process of its own: its own index of the same files (the same, built
    the same way), rather than one sent over with its caches."""
    index = ProjectIndex([path for path, _ in files])
    index.add_search_paths(files)
    return name_scans(files, index, len(files) > 1 or has_notebook(files))


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
    named_by: dict[str, frozenset[str]] = field(
        default_factory=dict
    )  # those names -> the files that name them (itself too)
    methods: frozenset[str] = frozenset()  # names the run's files define as methods
    # a module class of the run keeps a tensor it put on the GPU as a plain attribute
    # (`self.weights = Variable(torch.randn(k).cuda(), requires_grad=True)`): `.cuda()` on a
    # model loaded whole on the CPU would leave such a tensor there
    plain_gpu_tensors: bool = False
    # a plain class of the run (no base) has its own `cuda()` and no `to()`: a `.cuda()` on an
    # object of unknown class may be that method (defines_own_cuda_object)
    own_cuda_objects: bool = False
    other_files_save: bool = False  # another file of the run writes `torch.save(`
    # some file of the run compiles a module with `torch.jit.script(model)`: its methods may be
    # TorchScript, which has no `next()` (FastSpeech2's export script)
    scripts_modules: bool = False
    # methods of the run's classes called only as `self.name(...)` in an `__init__` (a base
    # model's `get_feature_size()`, called by its subclasses in other files while they build):
    # they run before the module is moved anywhere
    init_only_methods: frozenset[str] = frozenset()
    # checkpoint file names (`"2_3_lenet5.pt"`) that the run's `torch.save` lines write only in
    # files that never name a device (no `.cuda(`, `.to(`, `device`): CPU checkpoints
    cpu_saved_names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ProjectFacts:
    gpu_choice_files: frozenset[str] = frozenset()  # display paths of files that mention the variable
    gpu_choice_functions: frozenset[str] = frozenset()  # names of functions whose body mentions it
    index: ProjectIndex | None = None
    summaries: dict[str, ModuleSummary] = field(default_factory=dict)  # filled as files are analysed
    unreferenced: dict[str, frozenset[str]] = field(default_factory=dict)  # display path -> dead top-level functions
    # display paths of the files that may run in one process with another file that sets
    # CUDA_VISIBLE_DEVICES (shares_a_process_with)
    gpu_choice_mates: frozenset[str] = frozenset()
    scanned: frozenset[str] = frozenset()  # display paths of the run's files, notebooks included
    gpu_only: dict[str, frozenset[str]] = field(default_factory=dict)  # filled by the engine (users.py)
    missing: dict[str, frozenset[str]] = field(default_factory=dict)  # display path -> missing imports, once per file
    cuda_extensions: frozenset[str] = frozenset()  # modules a setup script of the run builds with CUDAExtension
    # files that compile CUDA code when imported (`cpp_extension.load`), and the files importing
    # them at their top, directly or not: none of them can run without a GPU
    builds_cuda_on_import: frozenset[str] = frozenset()
    unparseable: set[str] = field(default_factory=set)  # display paths of files with a syntax error (engine.py)
    # display paths of files whose import asks for a GPU (`torch.cuda.current_device()` at their
    # top, yolact.py): their importers cannot run without one either (engine.py)
    gpu_on_import: set[str] = field(default_factory=set)
    passed: dict[str, dict[str, Passed]] = field(default_factory=dict)  # display path -> what calls pass its functions
    named_by: dict[str, dict[str, frozenset[str]]] = field(
        default_factory=dict
    )  # display path -> its top-level names other files name -> those files
    methods: frozenset[str] = frozenset()  # names the run's files define as methods (several files only)
    init_only_methods: frozenset[str] = frozenset()  # see ProjectView.init_only_methods
    cpu_saved_names: frozenset[str] = frozenset()  # see ProjectView.cpu_saved_names
    plain_gpu_tensors: bool = False  # see ProjectView.plain_gpu_tensors
    own_cuda_objects: bool = False  # see ProjectView.own_cuda_objects
    scripts_modules: bool = False  # see ProjectView.scripts_modules
    savers: frozenset[str] = frozenset()  # display paths of the files that write `torch.save(`
    # display paths of the files that fork worker processes, and of those files with every file
    # their imports load (`forked_after`)
    fork_files: frozenset[str] = frozenset()
    runs_before_a_fork: frozenset[str] = frozenset()
    gpu_package_copies: frozenset[str] = frozenset()  # folders holding a copy of a GPU-only package's project

    def queries_cuda_too_early_at_import(self, path: str) -> bool:
        """A device declared at the top of `path` would ask CUDA whether it is there when the
        module is imported, which is too early where the program picks its GPUs afterwards
        (`chooses_gpus_elsewhere`) or forks worker processes afterwards: a child forked after
        `torch.cuda.is_available()` cannot use CUDA ("Cannot re-initialize CUDA in forked
        subprocess", checked on an H100; pixel2style2pixel's `mtcnn.py`, imported by a script
        whose `multiprocessing` workers each use a GPU)."""
        return path in self.runs_before_a_fork or self.chooses_gpus_elsewhere(path)

    def chooses_gpus_elsewhere(self, path: str) -> bool:
        """Another file that may run in one process with `path` (shares_a_process_with) sets
        CUDA_VISIBLE_DEVICES. A script of another sub-project, or another script that only
        shares a helper module with `path`, runs in another process."""
        if path in self.gpu_choice_mates:
            return True
        return path not in self.scanned and any(other != path for other in self.gpu_choice_files)

    @classmethod
    def from_files(cls, files: list[tuple[str, bytes]], names: Pending | None = None) -> ProjectFacts:
        """The run's text scans: the definitions and their callers here, and who names what
        (name_scans) here too, unless `names` is that half already under way in another
        process (parallel.TextScans)."""
        paths: set[str] = set()
        functions: set[str] = set()
        forks: set[str] = set()
        for path, data in files:
            if GPU_CHOICE_TEXT in data:
                paths.add(path)
                functions |= functions_choosing_gpus(data)
            if forks_workers(data):
                forks.add(path)
        index = ProjectIndex([path for path, _ in files])
        index.add_search_paths(files)
        several = len(files) > 1 or has_notebook(files)
        defined = script_functions(files, index) if several else {}
        unreferenced = unused_functions(files, defined, index.tops, index.lacks_a_name) if several else {}
        passed = callers_pass(files, index, defined)
        named = names.result() if names is not None else name_scans(files, index, several)
        for path, methods in named.unused_methods.items():
            if methods:
                unreferenced[path] = unreferenced.get(path, frozenset()) | methods
        return cls(
            frozenset(paths),
            frozenset(functions),
            index,
            unreferenced=unreferenced,
            gpu_choice_mates=shares_a_process_with(files, index, paths),
            scanned=frozenset(path for path, _ in files) if paths else frozenset(),
            cuda_extensions=named.cuda_extensions,
            passed=passed,
            named_by=named.named_by,
            builds_cuda_on_import=named.builds_cuda_on_import,
            methods=named.methods,
            init_only_methods=named.init_only_methods,
            cpu_saved_names=named.cpu_saved_names,
            plain_gpu_tensors=named.plain_gpu_tensors,
            own_cuda_objects=named.own_cuda_objects,
            scripts_modules=named.scripts_modules,
            savers=named.savers,
            fork_files=frozenset(forks),
            runs_before_a_fork=forked_after(files, index, forks),
            gpu_package_copies=_gpu_package_copies([path for path, _ in files]),
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
            self.needs_gpu_to_import(path, data),
            self.passed.get(path, {}),
            self.elsewhere(path),
            self.cuda_extensions,
            self.named_by.get(path, {}),
            self.methods,
            self.plain_gpu_tensors or keeps_plain_gpu_tensors(data),
            self.own_cuda_objects or defines_own_cuda_object(data),
            bool(self.savers - {path}),
            self.scripts_modules or b"jit.script(" in data,
            self.init_only_methods,
            self.cpu_saved_names,
        )

    def needs_gpu_to_import(self, path: str, data: bytes) -> bool:
        """Importing the file needs a GPU: it imports a CUDA extension or a GPU-only package, or
        a file of the run that needs one at import, or it belongs to a copy of a GPU-only
        package's project (its tests and examples)."""
        return (
            imports_any(data, self.cuda_extensions)
            or imports_gpu_package(data)
            or any(path.startswith(folder + "/") for folder in self.gpu_package_copies)
            or path in self.builds_cuda_on_import
            or self._imports_gpu_on_import(path, data)
        )

    def _imports_gpu_on_import(self, path: str, data: bytes) -> bool:
        return self.index is not None and bool(self.index.imports_of(path, data, self.gpu_on_import))

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
            if name == GPU_ON_IMPORT:
                imported = index.resolve(path, module, level)
                needs = imported is not None and (
                    imported in self.gpu_on_import or imported in self.builds_cuda_on_import
                )
                return Value(Kind.OTHER, Place.UNKNOWN, flag="gpu-import") if needs else None
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


def named_in_other_files(files: list[tuple[str, bytes]]) -> dict[str, dict[str, frozenset[str]]]:
    """For each file, its top-level classes and functions whose name another file of the run
    writes (an import, a call, a string), with the files that write it: callers this file's
    analysis does not see. The set is the same object for every file that defines the name,
    and holds the file itself if it writes the name too (a reader leaves it out): one set per
    file would grow with the square of the run (`main`, written by every script, is defined
    by every script)."""
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
    shared = {name: frozenset(paths) for name, paths in seen_in.items()}
    found = {
        path: {
            n.decode("ascii", "replace"): shared[n]
            for n in names
            if n in shared and (len(shared[n]) > 1 or path not in shared[n])
        }
        for path, names in defined.items()
    }
    return {path: names for path, names in found.items() if names}


_METHOD = re.compile(rb"^[ \t]+def[ \t]+(\w+)", re.MULTILINE)


def defined_methods(data: bytes) -> set[str]:
    """The names a file defines in an indented `def` (methods, mostly): a method of that name
    called on a module of unknown class (`model.module.serialize(...)`) may be the project's
    own, not a forward pass."""
    return {name.decode("ascii", "replace") for name in _METHOD.findall(data)}


_INIT = re.compile(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+__init__[ \t]*\(", re.MULTILINE)
_METHOD_CALL = re.compile(rb"\.(\w+)[ \t]*\(")
_SELF_CALL = re.compile(rb"\bself\.(\w+)[ \t]*\(")


def methods_called_only_in_init(files: list[tuple[str, bytes]]) -> frozenset[str]:
    """The names whose every call in the run (`.name(` anywhere) is `self.name(...)` in the
    body of an `__init__`: methods that run only while a module is built. Found with a few
    regular expressions per file, never a line-by-line walk: this runs on every file."""
    inside: Counter[bytes] = Counter()
    total: Counter[bytes] = Counter()
    for _, data in files:
        total.update(_METHOD_CALL.findall(data))
        for start, end in _init_bodies(data):
            inside.update(_SELF_CALL.findall(data, start, end))
    return frozenset(name.decode("ascii", "replace") for name, count in inside.items() if total[name] == count)


def _init_bodies(data: bytes) -> list[tuple[int, int]]:
    """The spans of the `__init__` definitions of a file: from `def` to the next line that is
    indented no deeper (a comment there ends it early, which only makes fewer names qualify)."""
    spans = []
    for match in _INIT.finditer(data):
        depth = len(match.group(1))
        ending = re.compile(rb"\n(?=[ \t]{0,%d}[^ \t\r\n])" % depth)
        end = ending.search(data, match.end())
        spans.append((match.end(), end.start() if end is not None else len(data)))
    return spans


_SAVED_NAME = re.compile(rb"torch\.save\([^\n]*?['\"]([\w.\-]+\.(?:pt|pth|pkl|tar|ckpt|bin))['\"]")
_PLACES = (b".cuda(", b".to(", b"device", b"cuda")


def cpu_saved_names(files: list[tuple[str, bytes]]) -> frozenset[str]:
    """The checkpoint file names written on a `torch.save` line (`torch.save(model.state_dict(),
    DATA_DIR / "2_3_lenet5.pt")`) only by files that place nothing: a lesson that trains on the
    CPU saves CPU tensors, which its later lessons load anywhere."""
    cpu: set[bytes] = set()
    placed: set[bytes] = set()
    for _, data in files:
        if b"torch.save(" not in data:
            continue
        names = set(_SAVED_NAME.findall(data))
        (placed if any(text in data for text in _PLACES) else cpu).update(names)
    return frozenset(name.decode("utf-8", "replace") for name in cpu - placed)


_PLAIN_GPU_TENSOR = re.compile(rb"^[ \t]+self\.\w+[ \t]*=[^\n]*\.(?:cuda|to)\(", re.MULTILINE)


def keeps_plain_gpu_tensors(data: bytes) -> bool:
    """A method of the file writes `self.x = ....cuda(...)` or `....to(...)` (darts' architecture
    weights, also once devfix has fixed them): maybe a plain tensor attribute of a module on the
    GPU, which `.cuda()` of the module does not move."""
    return (b".cuda(" in data or b".to(" in data) and _PLAIN_GPU_TENSOR.search(data) is not None


_PLAIN_CLASS = re.compile(rb"^class[ \t]+(\w+)[ \t]*(?:\([ \t]*(?:object)?[ \t]*\))?[ \t]*:", re.MULTILINE)


def defines_own_cuda_object(data: bytes) -> bool:
    """A top-level class of the file with no base (or `object`) defines `cuda()` and no `to()`
    (XLM's `SentenceEmbedder`, a wrapper around a model): a `.cuda()` on an object of unknown
    class may be its method, and `.to(device)` there raises AttributeError."""
    if b"def cuda" not in data:
        return False
    plain = set(_PLAIN_CLASS.findall(data))
    methods: dict[bytes, set[bytes]] = {}
    for name, owner in indented_defs(data):
        if owner is not None and owner in plain:
            methods.setdefault(owner, set()).add(name)
    return any(b"cuda" in names and b"to" not in names for names in methods.values())


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


def _gpu_package_copies(paths: list[str]) -> frozenset[str]:
    """The folders of the run that hold a GPU-only package's own project, copied in: a setup
    script beside the package (TorchSemiSeg's `furnace/apex/setup.py` and `furnace/apex/apex/`).
    Its tests and examples are that package's, GPU code by design."""
    present = set(paths)
    found = set()
    for path in paths:
        folder, name = posixpath.split(path)
        if name == "setup.py" and any(
            posixpath.join(folder, package, "__init__.py") in present for package in GPU_ONLY_CALLS
        ):
            found.add(folder)
    return frozenset(found)

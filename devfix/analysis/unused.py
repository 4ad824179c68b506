"""Code of the run that never runs, read off the files' text before any file is parsed.

A script folder's top-level function whose name nothing in the run writes (no call, no
callback, no string) never runs, and neither does a method of a closed class that nothing
builds: a hard-coded `.cuda()` there crashes nothing (reach.py). A package's functions are
its API and are always taken to run; a file that looks names up at run time (`globals()`,
`getattr(m, name)`, `fire.Fire()`) may run any of its functions.
"""

from __future__ import annotations

import os
import re
import weakref
from collections import Counter
from collections.abc import Callable, Collection

from devfix.analysis.callers import WORD, code_words
from devfix.analysis.imports import (
    IMPORT,
    ProjectIndex,
    dotted,
    import_statements,
    imported_modules,
    module_attributes,
    reached_from,
)
from devfix.analysis.text import (
    MODULE_BASES,
    TOP_CLASS,
    TOP_DEF,
    has_notebook,
    indented_defs,
    looks_up_by_name,
    named_in_own_file,
)
from devfix.analysis.torch_api import NN_MODULE_METHODS

# Functions some tool runs by their name alone: pytest's hooks and set-ups, dunders; and, in
# the files pytest collects (`test_*.py`, `*_test.py`), its tests. A `test_epoch()` of a
# `train.py` is the project's own evaluation helper: only a call runs it (GraphRNN's train.py).
_RUN_BY_NAME = re.compile(r"^(pytest_|setup|teardown|__)")


_TEST_BY_NAME = re.compile(r"^test")


_PYTEST_FILE = re.compile(r"(?:^|[/\\])(?:test_[^/\\]*|[^/\\]*_test|conftest)\.py$")


_DEF_NAME = re.compile(rb"\bdef[ \t]+(\w+)")


def unreferenced_functions(
    files: list[tuple[str, bytes]], index: ProjectIndex, defined: dict[str, list[tuple[str, bytes]]] | None = None
) -> dict[str, frozenset[str]]:
    """For each file outside a package, its top-level functions whose name is written nowhere
    in the run but in `def` lines: no call, no callback, no string names them
    (`getattr(m, "train")`, `__all__`, an entry point all count; so does `helpers.train()`
    anywhere, but not another script's bare `train()` when that script defines its own copy);
    and the methods of its classes nothing builds (`unused_class_methods`).
    A lone file is not a run of a project: its importers are unknown. A notebook has none."""
    if len(files) < 2 and not has_notebook(files):
        return {}
    defined = script_functions(files, index) if defined is None else defined
    found = unused_functions(files, defined, index.tops, index.lacks_a_name)
    for path, methods in unused_class_methods(files, script_paths(files, index), index).items():
        if methods:
            found[path] = found.get(path, frozenset()) | methods
    return found


def unused_functions(
    files: list[tuple[str, bytes]],
    defined: dict[str, list[tuple[str, bytes]]],
    tops: Collection[str] = (),
    lacks: Callable[[str, list[str]], bool] | None = None,
) -> dict[str, frozenset[str]]:
    """unreferenced_functions without the methods of unused classes. `tops`: the first parts
    of the names the run's files can be imported by (ProjectIndex.tops); `lacks`, whether
    the run's module of a name lacks some names (ProjectIndex.lacks_a_name)."""
    wanted = {name for names in defined.values() for _, name in names}
    if not wanted:
        return {}
    # `# create_submission(model)`, a call commented out or quoted out, is no use
    codes = [(path, data, code_words(data)) for path, data in files]
    definitions: Counter[bytes] = Counter()
    for _path, _data, code in codes:
        definitions.update(_DEF_NAME.findall(code))
    counts: Counter[bytes] = Counter()
    # A method's name is common English ("# load dataset") and a module's function name
    # (`torch.load`): for methods, neither counts.
    method_counts: Counter[bytes] = Counter()
    for path, _data, code in codes:
        written = [word for word in WORD.findall(code) if word in wanted]
        if written:
            words = _function_uses(code, wanted, tops, lacks)
            counts.update(words if path.rsplit("/", 1)[-1] == "__init__.py" else _without_bare_imports(code, words))
        method_counts.update(written)
        modules = imported_modules(code) if written else None
        if modules:
            method_counts.subtract(name for name in module_attributes(code, modules) if name in wanted)
    own = {path: _own_uses(code, {n for n in TOP_DEF.findall(data) if n in wanted}) for path, data, code in codes}
    everyone: Counter[bytes] = Counter()  # the uses of every file's own copy, summed once (not per file: quadratic)
    for uses in own.values():
        everyone.update(uses)
    found = {
        path: frozenset(
            key
            for key, n in names
            if (
                own[path][n] == 0  # nothing imports a notebook: only its own cells call its functions
                if path.endswith(".ipynb") and "." not in key
                else (method_counts if "." in key else counts)[n]
                == definitions[n] + (0 if "." in key else everyone[n] - own[path][n])
            )
        )
        for path, names in defined.items()
    }
    return {path: names for path, names in found.items() if names}


# A name not read off anything: `train(...)`, `callback=train`, `def train`.
_BARE_WORD = re.compile(rb"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*")


def _function_uses(
    code: bytes, wanted: set[bytes], tops: Collection[str], lacks: Callable[[str, list[str]], bool] | None = None
) -> list[bytes]:
    """The words of `code` that may name a top-level function of the run: not after a dot, or
    read off a module of the run an import binds (`utils.train`, `common.test.argmax`).
    `logits.argmax()`, `torch.argmax()` and `self.train()` are someone else's: GraphCL's
    uncalled `def argmax()` of a test script stayed alive through every `.argmax()`. A file
    that imports a module by a name built at run time (`task = importlib.import_module(...)`,
    then `task.make_network(config)`: stacked_hourglass) may read any attribute off it."""
    if _imports_by_name(code):
        return [word for word in WORD.findall(code) if word in wanted]
    outside = _imported_from_outside(code, tops, lacks)
    found = [word for word in _BARE_WORD.findall(code) if word in wanted and word not in outside]
    bound = _import_bound(code, tops)
    if bound:
        receivers = b"|".join(re.escape(name) for name in sorted(bound))
        for chain in re.finditer(rb"(?<![\w.])(?:" + receivers + rb")((?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+)", code):
            found += [word for word in WORD.findall(chain.group(1)) if word in wanted]
    return found


def _without_bare_imports(code: bytes, uses: list[bytes]) -> list[bytes]:
    """`uses` less the names a `from m import f` brings in that the file never writes again:
    MOTR's `main.py` imports `motdet_evaluate` and calls only its sibling. An `__init__.py`
    hands its imports on to the package's users, and is not asked."""
    imported: set[bytes] = set()
    for match in IMPORT.finditer(code):
        names = match.group(3)
        for part in (names or b"").split(b","):
            words = part.split()
            if len(words) == 1:
                imported.add(words[0])
    once = {name for name in imported if uses.count(name) == 1}
    return [word for word in uses if word not in once] if once else uses


def _imported_from_outside(
    code: bytes, tops: Collection[str], lacks: Callable[[str, list[str]], bool] | None
) -> set[bytes]:
    """The names `from m import name` binds where `m` is no module of the run, or the run's
    modules of that name never write `name` (the import fails): in that file they are not a
    function of the run of the same name. PointNet12's scripts import `test_clf` from a
    `utils` that lacks it, since the repository moved it to `pcd_utils`."""
    names: set[bytes] = set()
    for match in IMPORT.finditer(code):
        dots, module, imported, plain = match.groups()
        if plain is not None or dots or not module:
            continue
        text = module.decode("ascii", "replace")
        inside = text.split(".")[0] in tops
        for part in imported.split(b","):
            words = part.split()
            if not words or words[0] == b"*":
                continue
            if not inside or (lacks is not None and lacks(text, [words[0].decode("ascii", "replace")])):
                names.add(words[-1] if len(words) == 3 and words[1] == b"as" else words[0])
    return names


def _import_bound(code: bytes, tops: Collection[str]) -> set[bytes]:
    """The names the file's imports of the run's modules bind (`import a.b` binds `a`; `from .
    import utils`, `utils`), where `tops` holds the first part of the module's name."""
    names: set[bytes] = set()
    for match in IMPORT.finditer(code):
        dots, module, imported, plain = match.groups()
        if plain is None and not dots and module.split(b".")[0].decode("ascii", "replace") not in tops:
            continue
        for part in (imported if plain is None else plain).split(b","):
            words = part.split()
            if not words or (plain is not None and words[0].split(b".")[0].decode("ascii", "replace") not in tops):
                continue
            names.add(words[-1] if len(words) == 3 and words[1] == b"as" else words[0].split(b".")[0])
    return names


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


def unused_class_methods(
    files: list[tuple[str, bytes]],
    scripts: Collection[str],
    index: ProjectIndex | None = None,
    seers: dict[str, set[str]] | None = None,
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
            for name, bases in TOP_CLASS.findall(data)
            # pytest builds the `Test*` classes of the files it collects, never src/test.py's `Tester`
            if (name in closed or _torch_bases(bases)) and not (name.startswith(b"Test") and _PYTEST_FILE.search(path))
        ]
        for path, data in files
        if path in scripts
    }
    wanted = {name for found in classes.values() for name, _ in found}
    if not wanted:
        return {}
    codes = {path: code_words(data) for path, data in files}
    if any(_imports_by_name(code) for code in codes.values()):
        return {}  # a module imported by a computed name may be any file's
    data_of = dict(files)
    written: dict[str, Counter[bytes]] = {}
    dynamic: dict[str, bool] = {}
    own_lookup: dict[str, bool] = {}
    for path, data in files:
        code = codes[path]
        written[path] = Counter(word for word in WORD.findall(code) if word in wanted)
        if written[path]:
            written[path].subtract(_passed_on(code, wanted))
            written[path].subtract(_given_as_labels(code, wanted))
        # its own classes, by a computed name: `globals()[name]`, `eval(name)` (a `getattr(det, k)`
        # on an object reaches that object's attributes only)
        own_lookup[path] = looks_up_by_name(data)
        dynamic[path] = own_lookup[path] or _looks_up_anything(code)
    if seers is None and index is not None:
        seers = visible_from(files, index)
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


def stale_copies(files: list[tuple[str, bytes]], index: ProjectIndex) -> dict[str, frozenset[str]]:
    """Every function and method of a file that no import of the run resolves to, beside a file
    of the same module path (`core/function.py`) that one does: HRNet's `figures/lib/core/` and
    `lib/fp16_utils/core/`, stale copies of the `lib/core/` its tools import as `core.function`.
    The copy's code never runs. Not a file of a folder the run imports anything from, one with a
    `__main__` block, a file of an installed library, nor any file when code of the run that may
    run imports modules by a computed name."""
    tails: dict[str, list[str]] = {}
    for path, _ in files:
        tails.setdefault(_tail(path), []).append(path)
    if all(len(paths) < 2 for paths in tails.values()):
        return {}
    targets = {path: index.imports(path, data) for path, data in files}
    importers: dict[str, set[str]] = {}
    for path, found_targets in targets.items():
        for target in found_targets:
            importers.setdefault(target, set()).add(path)
    # what runs: the scripts (files nothing imports, but a module with no code of its own to run
    # beside an imported twin), and whatever they import, and so on
    data_of = dict(files)
    twinned = {path for path, _ in files if any(o != path and o in importers for o in tails[_tail(path)])}
    scripts = [p for p, d in files if p not in importers and not (p in twinned and _only_defines(d))]
    seen = reached_from(scripts, targets)
    used_folders = {os.path.dirname(target) for path in seen for target in targets.get(path, ())}
    stale = {
        path
        for path in data_of
        if path not in seen
        and path.endswith(".py")
        and os.path.dirname(path) not in used_folders  # a folder the run imports from: maybe reached
        and (path in importers or any(o != path and o in seen for o in tails[_tail(path)]))
    }
    found: dict[str, frozenset[str]] = {}
    for path, data in files:
        if path not in stale:
            continue
        if _MAIN_BLOCK.search(data) or index.in_library(path) or looks_up_by_name(data):
            continue
        classes = dict.fromkeys((name for name, _ in TOP_CLASS.findall(data)), False)
        keys = [name.decode("ascii", "replace") for name in TOP_DEF.findall(data)]
        found[path] = frozenset(keys + [key for key, _ in _closed_methods(data, classes, every=True)])
    return found if found and not _loads_modules_by_name(files) else {}


_MAIN_BLOCK = re.compile(rb"^if[ \t]+__name__[ \t]*==", re.MULTILINE)
_TOP_CALL = re.compile(rb"^[A-Za-z_][\w.]*[ \t]*\(", re.MULTILINE)


def _only_defines(data: bytes) -> bool:
    """A module that only defines (no `__main__` block, no top-level call, no options parsed):
    importing it is all it is for."""
    return not (_MAIN_BLOCK.search(data) or _TOP_CALL.search(data) or b"parse_args(" in data)


# A module loaded by a name or a path built at run time.
_LOADS_BY_NAME = re.compile(rb"\b(?:import_module|__import__|spec_from_file_location|load_source)\(")
_DEF_LINE = re.compile(rb"^([ \t]*)def[ \t]+(\w+)", re.MULTILINE)


def _loads_modules_by_name(files: list[tuple[str, bytes]]) -> bool:
    """Code of the run that may run loads a module by a computed name: at a file's top, or in a
    function whose name the run writes outside its `def` lines (HRNet's `utils/imports.py`
    defines `import_file()`, which nothing calls)."""
    holders: set[bytes] = set()
    for _, data in files:
        code = code_words(data)
        for match in _LOADS_BY_NAME.finditer(code):
            holder = _enclosing_def(code, match.start())
            if holder is None:
                return True
            holders.add(holder)
    if not holders:
        return False
    uses: Counter[bytes] = Counter()
    definitions: Counter[bytes] = Counter()
    for _, data in files:
        code = code_words(data)
        uses.update(word for word in WORD.findall(code) if word in holders)
        definitions.update(name for _, name in _DEF_LINE.findall(code) if name in holders)
    return any(uses[name] > definitions[name] for name in holders)


def _enclosing_def(code: bytes, position: int) -> bytes | None:
    """The name of the nearest `def` above `position` that is indented less than its line."""
    line_start = code.rfind(b"\n", 0, position) + 1
    indent = len(code[line_start:position]) - len(code[line_start:position].lstrip())
    for match in reversed(list(_DEF_LINE.finditer(code, 0, line_start))):
        if len(match.group(1)) < indent:
            return match.group(2)
    return None


def _tail(path: str) -> str:
    """A module's file with its folder: `core/function.py`."""
    return "/".join(path.replace(os.sep, "/").split("/")[-2:])


# `__all__ = ['MultiBoxLoss']`, `__all__ += (...)`: names a package passes on.
_ALL = re.compile(rb"^__all__[ \t]*\+?=[ \t]*[\[(]([^\])]*)", re.MULTILINE)


def _passed_on(code: bytes, wanted: set[bytes]) -> Counter[bytes]:
    """The names of `wanted` a file writes only to pass them on: in its import lines and its
    `__all__` (InsightFace-v2's `retinaface/layers/modules/__init__.py` re-exports a
    `MultiBoxLoss` nothing builds). A file that imports them from it names them again."""
    found: Counter[bytes] = Counter()
    for match in IMPORT.finditer(code):
        # `from .stackhourglass import PSMNet as stackhourglass` (PSMNet): the file uses the
        # class under another name, which no scan for `PSMNet` sees; the import counts as a use
        renamed = set(_RENAMED.findall(match.group(0)))
        found.update(word for word in WORD.findall(match.group(0)) if word in wanted and word not in renamed)
    for match in _ALL.finditer(code):
        found.update(word for word in WORD.findall(match.group(1)) if word in wanted)
    return found


_RENAMED = re.compile(rb"\b([A-Za-z_]\w*)[ \t]+as[ \t]+[A-Za-z_]\w*")
# `project='Raindrop'`, `name = "Raindrop"`: a quoted name given as a value, a label.
_LABEL = re.compile(rb"""(?<![=!<>])=[ \t]*(['"])([A-Za-z_]\w*)\1""")


def _given_as_labels(code: bytes, wanted: set[bytes]) -> Counter[bytes]:
    """The names of `wanted` a file writes only as a quoted value (Raindrop's
    `wandb.init(project='Raindrop')`, beside an unused `class Raindrop`): a file that looks
    nothing up by a computed name (those are asked apart) builds no class from a label."""
    if b"'" not in code and b'"' not in code:
        return Counter()
    return Counter(name for _, name in _LABEL.findall(code) if name in wanted)


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
        # `from loss.util import enet_weighing` names the package `loss`, not a module loss.py
        stems.update(
            part
            for found in resolved
            if not found.endswith("__init__.py")
            for part in found.replace(os.sep, "/").split("/")[:-1]
        )
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


def script_functions(files: list[tuple[str, bytes]], index: ProjectIndex) -> dict[str, list[tuple[str, bytes]]]:
    """For each file outside an installed library that looks nothing up by a computed name, its
    top-level functions and the methods of its closed classes, as ("train", b"train") and
    ("GAN.load", b"load"): code whose every use the run's text shows. Tests and dunders run by name."""
    defined: dict[str, list[tuple[str, bytes]]] = {}
    closed = _closed_classes(files)
    for path, data in files:
        if _is_script(path, data, index):
            names = [(n.decode("ascii", "replace"), n) for n in TOP_DEF.findall(data)] + _closed_methods(data, closed)
            by_name = _RUN_BY_NAME.match if not _PYTEST_FILE.search(path) else _runs_as_a_test
            defined[path] = [(key, n) for key, n in names if not by_name(n.decode("ascii", "replace"))]
    return defined


def script_paths(files: list[tuple[str, bytes]], index: ProjectIndex) -> set[str]:
    """The files script_functions reads."""
    return {path for path, data in files if _is_script(path, data, index)}


def _is_script(path: str, data: bytes, index: ProjectIndex) -> bool:
    return path.endswith((".py", ".ipynb")) and not index.in_library(path) and not looks_up_by_name(data)


def _runs_as_a_test(name: str) -> bool:
    return bool(_RUN_BY_NAME.match(name) or _TEST_BY_NAME.match(name))


def _closed_classes(files: list[tuple[str, bytes]]) -> dict[bytes, bool]:
    """The run's top-level classes whose every base is `object`, `nn.Module` or another such
    class of the run (every definition of its name such a class, alike), each with whether `nn.Module` is among its ancestors. Only
    the program (and, for a module, torch by the names of `nn.Module`'s own methods) calls their
    methods: a gym environment's `step`, a test case's `setUp`, a Lightning module's hooks are
    called by frameworks devfix does not know, so their classes are not closed."""
    bases: dict[bytes, list[list[bytes]]] = {}
    for _, data in files:
        for match in TOP_CLASS.finditer(data):
            listed = [b.strip() for b in (match.group(2) or b"").split(b",") if b.strip()]
            bases.setdefault(match.group(1), []).append(listed)
    closed: dict[bytes, bool | None] = {}

    def module_based(listed: list[bytes], seen: frozenset[bytes]) -> bool | None:
        module = False
        for base in listed:
            if base in MODULE_BASES:
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
    if not any(name in closed for name, _ in TOP_CLASS.findall(data)):
        return []  # no closed class: no line to read one by one
    return [
        (f"{owner.decode('ascii', 'replace')}.{method.decode('ascii', 'replace')}", method)
        for method, owner in indented_defs(data)
        if owner in closed and not (closed[owner] and method.decode("ascii", "replace") in NN_MODULE_METHODS)
    ]


_WHOLES: weakref.WeakKeyDictionary[ProjectIndex, dict[str, frozenset[str]]] = weakref.WeakKeyDictionary()


def _stem(path: str) -> str:
    """The name a module is imported by: `policy_networks` for common/policy_networks.py, the
    package's for an `__init__.py`."""
    folder, base = os.path.split(path)
    return os.path.basename(folder) if base == "__init__.py" else base.rsplit(".", 1)[0]

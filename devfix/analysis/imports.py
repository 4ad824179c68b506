"""Which project file an import names, found by a text scan before any file is parsed.

`from model import Net`, `from .data import load`, `import utils`: the importing file's
folder and its parents are searched, as Python's path does for a script run from the
repository, together with the folders its text puts on `sys.path` (`ProjectIndex`). A name
that is a well-known package or a standard library module is never a project file. The
scan over-approximates on purpose: it only orders the analysis and links summaries, it never
adds an edit by itself.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable

from devfix.analysis.linking import Export, ModuleSummary
from devfix.analysis.values import UNKNOWN, Kind, Place, Value

# Files that make a folder an installable distribution: its packages are a library's API.
_PACKAGING = ("setup.py", "setup.cfg", "pyproject.toml")


IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import\b[ \t]*\(?([\w \t,]*)|import[ \t]+([\w. \t,]+))", re.MULTILINE
)


# Names that are never a project's own module, whatever files lie around.
NOT_PROJECT = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "torchtext",
        "numpy",
        "scipy",
        "pandas",
        "sklearn",
        "PIL",
        "matplotlib",
        "tqdm",
        "transformers",
        "lightning",
        "pytorch_lightning",
        "timm",
        "cv2",
    }
)


STDLIB: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())


class ProjectIndex:
    """The run's Python files by the module names their importers may use."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files: dict[str, str] = {}  # normalised absolute path -> display path
        self.others = 0  # the run's files nothing can import (notebooks), which may import these
        for path in paths:
            if path.endswith(".py"):
                self.files[os.path.normcase(os.path.abspath(path))] = path
            else:
                self.others += 1
        self._distributions: dict[str, bool] = {}  # folder -> holds packaging metadata
        self.tops: set[str] = set()  # first components of every name some file could be imported by
        for absolute in self.files:
            folder, base = os.path.split(absolute)
            self.tops.add(base[:-3] if base != "__init__.py" else os.path.basename(folder))
            self.tops.update(part for part in folder.split(os.sep) if part)
        self.search_paths: dict[str, list[str]] = {}  # normalised absolute path -> folders it puts on sys.path
        self._installed: dict[str, str] | None = None  # a package a setup script of the run installs -> its folder
        self._imports: dict[str, tuple[bytes, list[str]]] = {}  # importer -> (its bytes, what they import)
        self._suffixes: dict[str, list[str]] | None = None  # a module's own name -> the files of that name
        self._submodules: dict[str, frozenset[str]] = {}  # folder -> absent git submodules declared above it
        self._resolved: dict[tuple[str, str | None, int], str | None] = {}  # resolve's answers

    def add_search_paths(self, files: Iterable[tuple[str, bytes]]) -> None:
        """Folders the run's files put on `sys.path` (py-faster-rcnn's `_init_paths.py`:
        `add_path(osp.join(this_dir, '..', 'lib'))`), read from the text, kept only where they
        hold files of the run. An importer of such a file (`import _init_paths`) then finds
        `import dataset` in `lib/`, as Python does."""
        folders = {os.path.dirname(absolute) for absolute in self.files}
        holders = {parent for folder in folders for parent in _ancestors(folder)}
        for path, data in files:
            if b"sys.path" not in data or not path.endswith(".py"):
                continue
            here = os.path.dirname(os.path.abspath(path))
            found = [root for root in _search_path_texts(here, data) if root in holders]
            if found:
                self.search_paths[os.path.normcase(os.path.abspath(path))] = found
        self._resolved.clear()  # answers given before may have missed these folders

    @property
    def several(self) -> bool:
        """The run has more than one file: its files may link to one another."""
        return len(self.files) + self.others > 1

    def missing_imports(self, importer: str, data: bytes) -> frozenset[str]:
        """The modules `importer` imports at its top level (unindented `import a.b`,
        `from a.b import c`) that cannot exist: `a` is a folder of the project's files, and
        no folder named `a` where Python could look holds a `b` of any kind (`.py`, package,
        extension, stub). Importing it raises ImportError on every machine. An indented
        import of a name the module lacks adds `module:name`, for that statement alone."""
        found: set[str] = set()
        absent = self._absent_submodules(importer)
        for match in TOP_IMPORT.finditer(data):
            for name in (match.group(1) or match.group(2)).decode("ascii", "replace").split(","):
                name = name.strip().split(" ")[0]
                if self._missing(importer, name) or (
                    name.split(".")[0] in absent and self.resolve(importer, name, 0) is None
                ):
                    found.add(name)
        for match in _FROM_NAMES.finditer(data):
            module = match.group(1).decode("ascii", "replace")
            names = [name.strip().split(" ")[0] for name in match.group(2).decode("ascii", "replace").split(",")]
            if self._stale_root(module, [name for name in names if name]):
                found.add(module)
        for match in _FROM_RELATIVE.finditer(data):
            module = match.group(2).decode("ascii", "replace")
            names = [name.strip().split(" ")[0] for name in match.group(3).decode("ascii", "replace").split(",")]
            missing = _missing_relative(importer, len(match.group(1)), module, [name for name in names if name])
            if missing is not None:
                found.add(missing)
        for match in _FROM_ANY.finditer(data):
            module = match.group(1).decode("ascii", "replace")
            names = [name.strip().split(" ")[0] for name in match.group(2).decode("ascii", "replace").split(",")]
            if self.lacks_a_name(module, [name for name in names if name and name != "*"]):
                found.add(module)
        for match in _FROM_INDENTED.finditer(data):
            # `from utils import cal_param_size, get_flops` in a `__main__` self-test: only that
            # statement raises, so the name is kept with its module (`utils:get_flops`)
            module = match.group(1).decode("ascii", "replace")
            for name in match.group(2).decode("ascii", "replace").split(","):
                name = name.strip().split(" ")[0]
                if name and name != "*" and self.lacks_a_name(module, [name]):
                    found.add(f"{module}:{name}")
        return frozenset(found)

    def _absent_submodules(self, importer: str) -> frozenset[str]:
        """The import names of the git submodules a `.gitmodules` above the file declares and
        the checkout lacks (an empty folder, or none): mellotron's `waveglow`, which
        `from waveglow.denoiser import Denoiser` needs. Such an import fails where the
        repository was cloned without its submodules; with them, their files are in the run."""
        folder = os.path.dirname(os.path.abspath(importer))
        if folder not in self._submodules:
            parent = os.path.dirname(folder)
            above = self._absent_submodules(os.path.join(parent, "_")) if parent != folder else frozenset()
            self._submodules[folder] = above | _absent_in(folder)
        return self._submodules[folder]

    def lacks_a_name(self, module: str, names: list[str]) -> bool:
        """`from utils import load_checkpoint, get_ImageNet_train_dataset`, where the project's
        `utils.py` (every file of the run that could be that module) never writes
        `get_ImageNet_train_dataset`: the import raises ImportError on every machine (RepVGG's
        `tools/insert_bn.py`, left behind when the helper was removed). Not when such a module
        may make names at run time (a star import, `globals()`, `exec`, a module `__getattr__`),
        nor for a package whose folder holds a submodule of that name."""
        parts = module.split(".")
        if not names or not all(parts) or parts[0] in NOT_PROJECT or parts[0] in STDLIB or parts[0] not in self.tops:
            return False
        candidates = self._all_by_suffix(parts)
        return bool(candidates) and any(
            not any(_mentions(path, name) for path in candidates) and not self._has_submodule([*parts, name])
            for name in names
        )

    def _has_submodule(self, parts: list[str]) -> bool:
        """Some file of the run is the module `parts` or lies inside it (`models/resnet.py`, or
        `models/resnet/...` of a namespace package), wherever the folder is."""
        inside = os.path.normcase(os.sep + os.path.join(*parts))
        return any(absolute.endswith(inside + ".py") or inside + os.sep in absolute for absolute in self.files)

    def _all_by_suffix(self, parts: list[str]) -> list[str]:
        """Every project file whose path ends in `parts` (`utils.py`, `utils/__init__.py`)."""
        if self._suffixes is None:
            self._suffixes = {}
            for absolute in self.files:
                folder, base = os.path.split(absolute)
                stem = base[:-3] if base != "__init__.py" else os.path.basename(folder)
                self._suffixes.setdefault(stem, []).append(absolute)
        wanted = os.sep + os.path.join(*parts)
        endings = (os.path.normcase(wanted + ".py"), os.path.normcase(os.path.join(wanted, "__init__.py")))
        return [
            absolute for absolute in self._suffixes.get(os.path.normcase(parts[-1]), []) if absolute.endswith(endings)
        ]

    def imports_of(self, importer: str, data: bytes, paths: set[str]) -> frozenset[str]:
        """The modules `importer` imports at its top level that are among the run's `paths`
        (files that cannot be parsed: importing one raises SyntaxError on every machine, as
        `input.cuda(async=True)` does since Python 3.7)."""
        if not paths:
            return frozenset()
        found: set[str] = set()
        for match in TOP_IMPORT.finditer(data):
            for name in (match.group(1) or match.group(2)).decode("ascii", "replace").split(","):
                name = name.strip().split(" ")[0]
                if name and self.resolve(importer, name, 0) in paths:
                    found.add(name)
        return frozenset(found)

    def _missing(self, importer: str, module: str) -> bool:
        parts = module.split(".")
        if len(parts) < 2 or parts[0] in NOT_PROJECT or parts[0] in STDLIB or parts[0] not in self.tops:
            return False
        folder = os.path.dirname(os.path.abspath(importer))
        seen_package = False
        while True:
            base = os.path.join(folder, parts[0])
            if os.path.isfile(base + ".py"):
                return False  # a module of that name: not a package of the project, be careful
            if os.path.isdir(base):
                seen_package = True
                if _provides(base, parts[1:]):
                    return False
            parent = os.path.dirname(folder)
            if parent == folder:
                return seen_package
            folder = parent

    def _stale_root(self, module: str, names: list[str]) -> bool:
        """`from training.datasets.coco import get_loader`, where nothing of the project is
        called `training`, the project's own `datasets/coco.py` lives elsewhere (moved, or the
        package renamed) and defines no `get_loader`: the import names the project's module
        under a root that no longer exists, and fails on every machine. A package installed
        under that root would have to mirror the project's own folders (a vendored copy does,
        and then defines the names, which this test asks)."""
        parts = module.split(".")
        if len(parts) < 3 or parts[0] in NOT_PROJECT or parts[0] in STDLIB or parts[0] in self.tops or not names:
            return False
        target = self._by_suffix(parts[1:])
        return target is not None and not any(_defines(target, name) for name in names)

    def _by_suffix(self, parts: list[str]) -> str | None:
        """The one project file whose path ends in `parts` (`datasets/coco.py`, or the package
        `datasets/coco/`), wherever it lives; None when none or several do."""
        found = self._all_by_suffix(parts)
        return found[0] if len(found) == 1 else None

    def in_library(self, path: str) -> bool:
        """The file belongs to a package of an installable distribution (a `setup.py`,
        `setup.cfg` or a `pyproject.toml` with a `[project]` or build table above it): others
        import its functions, which count as called. A package of a repository that nothing
        installs (`utils/` beside the training scripts) is only used by the run's own files."""
        if not self.in_package(path):
            return False
        folder = os.path.dirname(os.path.abspath(path))
        while True:
            if folder not in self._distributions:
                self._distributions[folder] = any(_packages(os.path.join(folder, name)) for name in _PACKAGING)
            if self._distributions[folder]:
                return True
            parent = os.path.dirname(folder)
            if parent == folder or os.path.exists(os.path.join(folder, ".git")):
                return False  # a repository's root ends the search
            folder = parent

    def in_package(self, path: str) -> bool:
        """The file's folder is a package of the run (it has an `__init__.py`)."""
        folder = os.path.dirname(os.path.normcase(os.path.abspath(path)))
        return os.path.join(folder, "__init__.py") in self.files

    def resolve(self, importer: str, module: str | None, level: int) -> str | None:
        """The display path of the project file `from <dots><module> import ...` in `importer`
        names, if it is one of the run's files. Asked for every name a file reads from its
        imports (project.linker), so each answer is kept."""
        key = (importer, module, level)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(importer, module, level)
        return self._resolved[key]

    def _resolve(self, importer: str, module: str | None, level: int) -> str | None:
        folder = os.path.dirname(os.path.abspath(importer))
        parts = module.split(".") if module else []
        if level:
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            return self._file(folder, parts) if parts else self._file(folder, [], package=True)
        if not parts or parts[0] in NOT_PROJECT or parts[0] in STDLIB or parts[0] not in self.tops:
            return None
        start = folder
        while True:
            found = self._file(folder, parts)
            if found is not None:
                return found
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        for root in self._search_paths_of(importer, start):
            found = self._file(root, parts)
            if found is not None:
                return found
        home = self.installed().get(parts[0])
        return self._file(home, parts) if home is not None else None

    def installed(self) -> dict[str, str]:
        """The packages of the run that sit beside a packaging file (`pointnet2_ops_lib/setup.py`
        beside `pointnet2_ops_lib/pointnet2_ops/`): once installed, any script imports them by
        name. Each name maps to the folder it is found in; a name found twice maps to none."""
        if self._installed is None:
            found: dict[str, str | None] = {}
            for absolute in self.files:
                folder, base = os.path.split(absolute)
                if base != "__init__.py":
                    continue
                parent, name = os.path.split(folder)
                if os.path.join(parent, "__init__.py") in self.files:
                    continue  # a subpackage
                if any(os.path.isfile(os.path.join(parent, packaging)) for packaging in _PACKAGING):
                    found[name] = None if name in found else parent
            self._installed = {name: parent for name, parent in found.items() if parent is not None}
        return self._installed

    def _search_paths_of(self, importer: str, folder: str) -> list[str]:
        """The folders `importer` puts on `sys.path`, itself or through a sibling module it
        imports for that (`import _init_paths`, which Python finds beside the script)."""
        if not self.search_paths:
            return []
        found = list(self.search_paths.get(os.path.normcase(os.path.abspath(importer)), []))
        for inserter, roots in self.search_paths.items():
            if os.path.dirname(inserter) == os.path.normcase(folder) and inserter != os.path.normcase(
                os.path.abspath(importer)
            ):
                found += roots
        return found

    def _file(self, folder: str, parts: list[str], package: bool = False) -> str | None:
        base = os.path.join(folder, *parts)
        if not package:
            found = self.files.get(os.path.normcase(base + ".py"))
            if found is not None:
                return found
        return self.files.get(os.path.normcase(os.path.join(base, "__init__.py")))

    def lookup(
        self, summaries: dict[str, ModuleSummary], importer: str, module: str | None, level: int, name: str | None
    ) -> Export | None:
        """What `from <module> import <name>` binds in `importer`, from the summary of the
        file it names (a submodule imported by name is not followed). For `*`, a value whose
        attributes name what the file exports."""
        path = self.resolve(importer, module, level)
        if path is None or path == importer:
            return None
        summary = summaries.get(path)
        if summary is None or name is None:
            return None
        if name == "*":
            return Value(
                Kind.OTHER, Place.UNKNOWN, attrs=tuple((n, UNKNOWN) for n in summary.names if not n.startswith("_"))
            )
        return summary.names.get(name)

    def imports(self, importer: str, data: bytes) -> list[str]:
        """The run's files that `importer` imports, from a text scan; asked once per file's bytes
        (the order, the import groups, the dead-class scans all ask)."""
        known = self._imports.get(importer)
        if known is not None and known[0] is data:
            return known[1]
        found = self._scan_imports(importer, data)
        self._imports[importer] = (data, found)
        return found

    def scan_imports(self, importer: str, data: bytes) -> list[str]:
        """imports, uncached: for a part of a file's text (the imports of one `try:` block)."""
        return self._scan_imports(importer, data)

    def _scan_imports(self, importer: str, data: bytes) -> list[str]:
        found: list[str] = []
        for match in IMPORT.finditer(data):
            dots, module, imported, plain = match.groups()
            names = (
                [module.decode("ascii", "replace")]
                if plain is None
                else [n.strip().split()[0] for n in plain.decode("ascii", "replace").split(",") if n.strip()]
            )
            if plain is None and imported:
                # `from utils import array_tool as at`: a submodule imported by name runs first too
                prefix = module.decode("ascii", "replace")
                names += [
                    f"{prefix}.{n.split()[0]}" if prefix else n.split()[0]
                    for n in imported.decode("ascii", "replace").split(",")
                    if n.strip()
                ]
            for name in names:
                parts = name.split(".") if name else [""]
                # `import a.b.c` runs a/__init__.py and a/b/__init__.py first
                for depth in range(1, len(parts) + 1):
                    path = self.resolve(importer, ".".join(parts[:depth]) or None, len(dots or b""))
                    if path is not None and path not in found and path != importer:
                        found.append(path)
        return found


def _defines(path: str, name: str) -> bool:
    """The module file `path` binds `name` at its top (a `def`, a `class`, an assignment, an
    import, a star import that may bring anything), or, as a package, holds a submodule of
    that name."""
    data = _module_text(path)
    if data is None or _package_holds(path, name):
        return True  # cannot tell: assume it is there
    word = re.escape(name.encode("ascii", "replace"))
    binds = rb"^(?:(?:async[ \t]+)?def[ \t]+W\b|class[ \t]+W\b|W[ \t]*[:=,]|.*\bimport\b.*(?:\*|\bW\b))"
    return re.search(binds.replace(b"W", word), data, re.MULTILINE) is not None


# What lets a module bind names its text does not spell: `from x import *`, `globals()[k] = v`,
# `exec(...)`, a module-level `__getattr__` (PEP 562), `setattr(sys.modules[__name__], ...)`.
_MAKES_NAMES = re.compile(rb"\bimport[ \t]+\*|\bglobals\(|\bexec\(|\b__getattr__\b|\bsys\.modules\b")


def _mentions(path: str, name: str) -> bool:
    """The module file `path` may bind `name`: it writes the word anywhere, may make names at
    run time, or, as a package, holds a submodule of that name; also when it cannot be read."""
    data = _module_text(path)
    if data is None or _package_holds(path, name):
        return True
    word = re.escape(name.encode("ascii", "replace"))
    return re.search(rb"\b" + word + rb"\b", data) is not None or _MAKES_NAMES.search(data) is not None


def _package_holds(path: str, name: str) -> bool:
    """`path` is a package's `__init__.py` whose folder holds a submodule `name`."""
    folder = os.path.dirname(path)
    return path.endswith("__init__.py") and (
        os.path.isdir(os.path.join(folder, name)) or os.path.isfile(os.path.join(folder, name + ".py"))
    )


def _module_text(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


_SUBMODULE_PATH = re.compile(rb"^[ \t]*path[ \t]*=[ \t]*(\S+)[ \t]*$", re.MULTILINE)


def _absent_in(folder: str) -> frozenset[str]:
    """The last names of the submodule paths the folder's `.gitmodules` declares whose folder
    is missing or empty."""
    data = _module_text(os.path.join(folder, ".gitmodules"))
    if data is None:
        return frozenset()
    found = set()
    for path in _SUBMODULE_PATH.findall(data):
        where = os.path.join(folder, os.fsdecode(path).strip("/"))
        try:
            empty = not os.listdir(where)
        except OSError:
            empty = True
        if empty:
            found.add(os.path.basename(where))
    return frozenset(found)


def _missing_relative(importer: str, level: int, module: str, names: list[str]) -> str | None:
    """`from .model_utils import x` or `from . import model_utils` at a module's top, where
    the package holds no such module in any form (nor, for the second, does its `__init__.py`
    write the name; a folder without one is a namespace package, which holds modules only):
    importing the file raises ImportError on every machine (PIDNet's `models/others/`, copied
    from another repository without its sibling). The import as first_failure matches it: its
    dots, then the module or the name."""
    folder = os.path.dirname(os.path.abspath(importer))
    for _ in range(level - 1):
        folder = os.path.dirname(folder)
    if module:
        return None if _provides(folder, module.split(".")) else "." * level + module
    init = os.path.join(folder, "__init__.py")
    for name in names:
        if name != "*" and not _provides(folder, [name]) and not (os.path.isfile(init) and _mentions(init, name)):
            return "." * level + name
    return None


def _provides(folder: str, parts: list[str]) -> bool:
    """`folder` holds the submodule `parts` in some form Python can import."""
    for _index, part in enumerate(parts):
        try:
            entries = os.listdir(folder)
        except OSError:
            return True  # cannot tell: assume it is there
        if not any(entry == part or entry.startswith(part + ".") for entry in entries):
            return False
        folder = os.path.join(folder, part)
        if not os.path.isdir(folder):
            return True  # a module file: what follows is an attribute, or an error we do not claim
    return True


# `join(BASE_DIR, '..', 'lib')`, `join(BASE_DIR, "../utils")` (Relation-Shape-CNN's models)
_PATH_JOIN = re.compile(rb"\bjoin\(\s*([^'\"(),]+(?:\([^()]*\))?)\s*((?:,\s*['\"][\w./\-]+['\"]\s*)+)\)")


_PATH_LITERAL = re.compile(rb"sys\.path\.(?:append|insert)\((?:\s*0\s*,)?\s*['\"]([\w./\-]+)['\"]\s*\)")


_PATH_OF_FILE = re.compile(rb"sys\.path\.(?:append|insert)\((?:\s*0\s*,)?([^\n]*__file__[^\n]*)")


def _search_path_texts(here: str, data: bytes) -> list[str]:
    """The folders a file's text puts on `sys.path`, as absolute paths: joins of the file's
    folder with literal parts, literal paths (from the script's folder, where it is run), and
    `dirname(dirname(abspath(__file__)))` chains."""
    found = []
    for _base, parts in _PATH_JOIN.findall(data):
        pieces = [piece.strip().strip("'\"") for piece in parts.decode("utf-8", "replace").split(",") if piece.strip()]
        found.append(os.path.normpath(os.path.join(here, *pieces)))
    for literal in _PATH_LITERAL.findall(data):
        found.append(os.path.normpath(os.path.join(here, literal.decode("utf-8", "replace"))))
    for call in _PATH_OF_FILE.findall(data):
        ups = call.count(b"dirname(") - 1
        if 0 < ups < 5 and b"join(" not in call:
            folder = here
            for _ in range(ups):
                folder = os.path.dirname(folder)
            found.append(folder)
    for line in _SYS_PATH_JOIN.findall(data):
        # `sys.path.insert(0, os.path.join(cfg.root_dir, 'common'))`: a base devfix cannot
        # evaluate, so `common` beside the file's folder or above it (the caller keeps those
        # that hold files of the run)
        for _base, parts in _PATH_JOIN.findall(line):
            pieces = [p.strip().strip("'\"") for p in parts.decode("utf-8", "replace").split(",") if p.strip()]
            found += [os.path.normpath(os.path.join(up, *pieces)) for up in _parents(here, 2)]
    return [os.path.normcase(folder) for folder in found]


_SYS_PATH_JOIN = re.compile(rb"sys\.path\.(?:append|insert)\([^\n]*\bjoin\([^\n]*")


def _parents(folder: str, count: int) -> list[str]:
    """The `count` folders above `folder`, nearest first."""
    found = []
    for _ in range(count):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        found.append(parent)
        folder = parent
    return found


def _ancestors(folder: str) -> Iterable[str]:
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _packages(path: str) -> bool:
    """`path` is packaging metadata: a `setup.py` or `setup.cfg`, or a `pyproject.toml` that
    describes a distribution (not one that only configures tools, devfix among them)."""
    if not os.path.isfile(path):
        return False
    if not path.endswith(".toml"):
        return True
    try:
        with open(path, "rb") as handle:
            text = handle.read(200_000)
    except OSError:
        return False
    return re.search(rb"^\[(?:project|build-system|tool\.poetry)\]", text, re.MULTILINE) is not None


def import_statements(data: bytes) -> Iterable[tuple[int, str, list[str], list[str] | None]]:
    """Each import statement of the text, decoded once: (its dots, the `from` module, the names
    it imports from it, or the modules of a plain `import a, b.c as d`)."""
    for match in IMPORT.finditer(data):
        dots, module, imported, plain = (
            g.decode("ascii", "replace") if g is not None else None for g in match.groups()
        )
        names = [n.split()[0] for n in (imported or "").split(",") if n.strip()]
        modules = [n.split()[0] for n in plain.split(",") if n.strip()] if plain is not None else None
        yield len(dots or ""), module or "", names, modules


def dotted(module: str, names: list[str]) -> list[str]:
    """`from a import b, c` as the modules it may bind: `a.b`, `a.c` (`b` after `from . import b`)."""
    return [f"{module}.{name}" if module else name for name in names]


def imports_any(data: bytes, modules: frozenset[str]) -> bool:
    """The file imports one of `modules` by its full name (`import m`, `import m as x`,
    `from m import f`, `from pkg import m` for `pkg.m`)."""
    if not modules:
        return False
    for level, module, imported, plain in import_statements(data):
        if level:
            continue
        names = plain if plain is not None else [module, *dotted(module, imported)]
        if any(name in modules for name in names):
            return True
    return False


def module_attributes(code: bytes, modules: set[bytes]) -> list[bytes]:
    """The attributes read off the imported `modules` (`load` of `torch.load`): a regex made of
    those few names, so that the file's other words are never tried."""
    receivers = b"|".join(re.escape(module) for module in sorted(modules))
    return re.findall(rb"(?<![\w.])(?:" + receivers + rb")[ \t]*\.[ \t]*([A-Za-z_][A-Za-z0-9_]*)", code)


def imported_modules(data: bytes) -> set[bytes]:
    """The names `import torch`, `import numpy as np`, `import os.path` bind: `torch.load` is
    the module's function, not a reference to a method called `load`."""
    names: set[bytes] = set()
    for clause in (match.group(4) for match in IMPORT.finditer(data) if match.group(4)):
        for part in clause.split(b","):
            words = part.split()
            if words:
                names.add(words[-1] if len(words) == 3 and words[1] == b"as" else words[0].split(b".")[0])
    return names


# `from a.b import c, d` at a module's top (absolute), with the names it imports.
_FROM_ANY = re.compile(rb"^from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w \t,*]+)", re.MULTILINE)
# `from a.b import c, d` indented (in a block), with the names it imports.
_FROM_INDENTED = re.compile(rb"^[ \t]+from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w \t,]+)", re.MULTILINE)
# `from .model_utils import x`, `from .. import utils` at a module's top: dots, module, names.
_FROM_RELATIVE = re.compile(rb"^from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+\(?([\w \t,*]+)", re.MULTILINE)
# `from a.b.c import d, e` at a module's top, with the names it imports.
_FROM_NAMES = re.compile(rb"^from[ \t]+([\w]+\.[\w]+\.[\w.]+)[ \t]+import[ \t]+\(?([\w \t,]+)", re.MULTILINE)

TOP_IMPORT = re.compile(
    rb"^(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))", re.MULTILINE
)


def reached_from(start: list[str], edges: dict[str, list[str]]) -> set[str]:
    """`start` and every file reached from it along `edges` (the run's imports, or importers)."""
    found = set(start)
    todo = list(start)
    while todo:
        for other in edges.get(todo.pop(), ()):
            if other not in found:
                found.add(other)
                todo.append(other)
    return found

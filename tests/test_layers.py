"""The analysis is layered one way (docs/architecture.md): no module imports, at its top
level, a module that imports it back, directly or through others."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "devfix"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:  # top level only
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("devfix"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("devfix"))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts): p for p in PACKAGE.rglob("*.py")}
    modules = {name.removesuffix(".__init__"): path for name, path in modules.items()}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def test_the_analysis_modules_import_one_way():
    graph = {name: deps for name, deps in _graph().items() if name.startswith("devfix.analysis.")}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep] if dep in path else [name, dep])
            elif dep in graph and not state.get(dep):
                visit(dep, [*path, dep])
        state[name] = 2

    for name in sorted(graph):
        if not state.get(name):
            visit(name, [name])
    assert cycles == []


def _documented_layers() -> list[str]:
    """The analysis modules as docs/architecture.md lists them, top to bottom."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = next(part for part in text.split("```")[1::2] if part.lstrip("\n").startswith(" facade"))
    return [f"devfix.analysis.{name}" for name in re.findall(r"^ +(?:[a-z]+ +)?(\w+)\.py ", block, flags=re.MULTILINE)]


def test_the_documented_layers_match_the_imports():
    """Each module of the architecture's list imports (at its top level) only modules listed below it."""
    listed = _documented_layers()
    graph = {name: deps for name, deps in _graph().items() if name.startswith("devfix.analysis.")}
    assert sorted(listed) == sorted(graph), "docs/architecture.md lists every analysis module once"
    upward = {
        name: sorted(dep for dep in graph[name] if dep in graph and listed.index(dep) < listed.index(name))
        for name in listed
    }
    assert {name: deps for name, deps in upward.items() if deps} == {}


def test_no_module_reaches_800_lines():
    """Issue 12's bound, for every module of the package: one that grows past it is split by
    what it knows (imports.py out of project.py, unused.py and text.py after it, parsing.py
    out of engine.py), so each stays readable in one sitting."""
    long = {
        str(path.relative_to(PACKAGE)): count
        for path in PACKAGE.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) >= 800
    }
    assert long == {}

"""Tests that exist to run on a GPU, and what a test's condition says of the machine.

A test named for the GPU (`test_cuda_forward`), marked for it (`@pytest.mark.requires_cuda`),
skipped without one (`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`), or in a
module whose `pytestmark` skips them all, never runs on a CPU-only machine: its `.cuda()`
calls are its purpose, not a bug (reach.py).
"""

from __future__ import annotations

import re

import libcst as cst

from devfix.analysis.program import Program
from devfix.analysis.tree import Tree
from devfix.analysis.values import GPU_SKIP


def cpu_truth(program: Program, test: cst.BaseExpression) -> bool | None:
    """The condition's truth on a CPU-only machine, as the flow recorded it (None: unknown)."""
    value = program.values.get(id(test))
    return value.cpu if value is not None else None


def names_a_gpu_test(name: str) -> bool:
    """A test whose name says it tests the GPU (`test_GPU`, `test_cuda_forward`,
    `testMultiGpu`): it exists to run there, often beside a CPU twin. Rewriting its `.cuda()`
    calls would only make it a second CPU test on a machine without one."""
    words = _CAMEL.sub(r"\1_\2", name).lower().split("_")
    return bool(words) and words[0] == "test" and any(_GPU_WORD.match(word) for word in words[1:])


_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_GPU_WORD = re.compile(r"^(?:cuda|gpus?|multigpus?)$")


# Custom pytest markers that select GPU tests (`@pytest.mark.requires_cuda`, `@pytest.mark.gpu`):
# a CPU-only CI deselects them (`-m "not requires_cuda"`).
GPU_MARKER = re.compile(
    r"^(?:requires?_|needs?_|only_)?(?:cuda|gpus?|multi_?gpus?)(?:_only|_required)?$", re.IGNORECASE
)


def tests_skipped_without_gpu(tree: Tree, program: Program) -> bool:
    """The module marks all its tests to be skipped without a GPU (`pytestmark =
    pytest.mark.skipif(not torch.cuda.is_available(), reason=...)`, nanochat's optimizer
    tests; or a list of marks holding one): no test or helper of it runs there."""
    for statement in tree.module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if not (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == "pytestmark"
            ):
                continue
            value = small.value
            marks = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
            if any(skips_without_gpu(program, mark) for mark in marks):
                return True
    return False


def skips_without_gpu(program: Program, decorator: cst.BaseExpression) -> bool:
    """`pytest.mark.skipif(<true without a GPU>, ...)`, `unittest.skipIf(...)`, `skipUnless(<false>)`,
    such a decorator kept in a name, and a GPU marker (`pytest.mark.requires_cuda`)."""
    marker = program.values.get(id(decorator.func if isinstance(decorator, cst.Call) else decorator))
    if marker is not None and marker.flag == GPU_SKIP and not isinstance(decorator, cst.Call):
        return True  # `@skipifnocuda`, a `skipif` kept in a name, here or in another file
    if marker is not None and marker.qual is not None and marker.qual.startswith("pytest.mark."):
        if GPU_MARKER.match(marker.qual.split(".")[-1]):
            return True
    if not isinstance(decorator, cst.Call) or not decorator.args:
        return False
    callee = program.values.get(id(decorator.func))
    qual = callee.qual if callee is not None and callee.qual else ""
    name = (
        qual.split(".")[-1]
        if qual
        else (decorator.func.attr.value if isinstance(decorator.func, cst.Attribute) else "")
    )
    test = cpu_truth(program, decorator.args[0].value)
    if name in ("skipif", "skipIf"):
        return test is True
    if name == "skipUnless":
        return test is False
    return False

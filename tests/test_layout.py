"""layout.py places nodes and writes fixed files from the file's own text, generating only
the statements it must: its positions must be those of the whole module's generation, and
its fixed files the whole new module's code, byte for byte, on every fixture and on the
shapes that make the two parsers' statements hard to line up."""

from __future__ import annotations

import libcst as cst
import pytest

from devfix import parsing
from devfix.analysis.layout import Layout
from devfix.config import Config
from devfix.engine import process_source
from tests.fixture_cases import all_cases

AWKWARD = '''#!/usr/bin/env python
# a header comment

"""doc"""
import torch; import os


# comments before a decorated class
@decorator(
    1,
)
# between the decorators
@other
class Net(torch.nn.Module):
    def forward(self, x):  # trailing
        return x.cuda()
        # the block's own footer


x = 1; y = torch.zeros(2).cuda(); z = (
    3
)
if x:
    pass
else:  # comment
    y = 2
# the module's footer


'''


def _nodes(module: cst.Module) -> list[tuple[cst.CSTNode, list[cst.CSTNode]]]:
    found: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = []
    stack: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = [(module, [])]
    while stack:
        node, ancestors = stack.pop()
        found.append((node, ancestors))
        stack.extend((child, [node, *ancestors]) for child in node.children)
    return found


def _sources() -> list[tuple[str, bytes]]:
    cases = [(case.id, case.path.read_bytes()) for case in all_cases()]
    awkward = AWKWARD.encode()
    return [*cases, ("awkward", awkward), ("awkward_crlf", awkward.replace(b"\n", b"\r\n"))]


@pytest.mark.parametrize("name, source", _sources(), ids=[name for name, _ in _sources()])
def test_positions_from_single_statements_are_the_whole_generations(name: str, source: bytes) -> None:
    module, original = parsing.parse(source)
    assert original is not None
    parts, whole = Layout(module, original), Layout(module, None)
    statements = {id(statement) for statement in module.body}
    for node, ancestors in _nodes(module):
        if id(node) in statements or (len(ancestors) > 1 and id(ancestors[-2]) in statements):
            assert parts.position(node, ancestors) == whole.position(node, ancestors), (name, type(node).__name__)
    assert parts._whole is None, "every statement was placed in the text, the module never generated whole"


def test_positions_are_libcsts_on_awkward_shapes() -> None:
    module, original = parsing.parse(AWKWARD.encode())
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    provider = wrapper.resolve(cst.metadata.PositionProvider)
    layout = Layout(module, original)
    statements = {id(statement) for statement in module.body}
    for node, ancestors in _nodes(module):
        if node in provider and (id(node) in statements or (len(ancestors) > 1 and id(ancestors[-2]) in statements)):
            start = provider[node].start
            assert layout.position(node, ancestors) == (start.line, start.column + 1), type(node).__name__
    assert layout._whole is None


def _edits(module: cst.Module) -> dict[str, cst.Module]:
    """New modules as the engine's edits make them: statements replaced, inserted, removed."""
    body = list(module.body)
    new_statement = cst.parse_statement("device = torch.device('cpu')\n")
    changed = body[-1].with_changes(leading_lines=[])
    return {
        "replace_last": module.with_changes(body=[*body[:-1], changed]),
        "insert_first": module.with_changes(body=[new_statement, *body]),
        "insert_last": module.with_changes(body=[*body, new_statement]),
        "insert_middle": module.with_changes(body=[*body[:2], new_statement, *body[2:]]),
        "remove_first": module.with_changes(body=body[1:]),
        "remove_middle": module.with_changes(body=[*body[:2], *body[3:]]),
        "replace_two": module.with_changes(body=[body[0], new_statement, new_statement, *body[3:]]),
        "remove_all": module.with_changes(body=[]),
    }


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_spliced_module_is_its_generated_code(newline: str) -> None:
    module, original = parsing.parse(AWKWARD.replace("\n", newline).encode())
    for name, new in _edits(module).items():
        assert Layout(module, original).fixed_text(new) == new.code, name


def test_a_text_libcst_does_not_reproduce_is_spliced() -> None:
    """Old Mac line endings lose their final newline in LibCST's code (which the whole
    generation would drop, and the engine's byte-for-byte guard then skip the file): each
    statement generated alone still matches the text, so the file's own text is kept."""
    module, original = parsing.parse(b"import torch\rx = torch.zeros(1).cuda()\ry = 1\r")
    layout = Layout(module, original)
    assert layout.fixed_text(module.with_changes(body=[module.body[0], module.body[2]])) == "import torch\ry = 1\r"


def test_a_last_statement_without_its_newline_is_generated_whole() -> None:
    """A file that ends without a newline: its last statement, generated alone, ends with
    one, so it cannot be placed in the text and the module is generated whole."""
    module, original = parsing.parse(b"import torch\nx = 1")
    layout = Layout(module, original)
    assert layout.fixed_text(module.with_changes(body=module.body[:1])) is None


@pytest.mark.parametrize("case", all_cases(), ids=lambda case: case.id)
def test_every_fixture_is_fixed_to_the_same_bytes_as_by_the_whole_generation(case, monkeypatch) -> None:
    source = case.path.read_bytes()
    spliced = process_source(source, case.config or Config(), fix=True)
    monkeypatch.setattr(Layout, "fixed_text", lambda self, new: None)
    whole = process_source(source, case.config or Config(), fix=True)
    assert spliced.new == whole.new
    assert spliced.diagnostics == whole.diagnostics

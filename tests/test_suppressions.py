"""Inline suppressions: `# devfix: ignore[...]`, `# noqa: DEVxxx`, `# devfix: skip-file`."""

from __future__ import annotations

import textwrap

from devfix.engine import fix_code

SOURCE = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn

    model = nn.Linear(4, 2).cuda()  # devfix: ignore[DEV002]
    x = torch.randn(3, 4).cuda()  # noqa: DEV002, E501
    y = torch.randn(3, 4).cuda()  # noqa
    z = torch.randn(3, 4).cuda()  # devfix: ignore
    w = torch.randn(3, 4).cuda()  # devfix: ignore[DEV004]
    note = "# devfix: skip-file"
    print(model(x), y, z, w, note)
    """
)


def test_ignored_lines_are_neither_reported_nor_fixed():
    new, diagnostics = fix_code(SOURCE)
    reported = {(d.line, d.code) for d in diagnostics}
    assert reported == {(4, "DEV001"), (6, "DEV002"), (8, "DEV002")}  # bare noqa and other codes do not count
    assert "model = nn.Linear(4, 2).cuda()  # devfix: ignore[DEV002]" in new
    assert "x = torch.randn(3, 4).cuda()  # noqa: DEV002, E501" in new
    assert "z = torch.randn(3, 4).cuda()  # devfix: ignore" in new
    assert "y = torch.randn(3, 4).to(device)  # noqa" in new
    assert "w = torch.randn(3, 4).to(device)" in new


def test_skip_file_leaves_the_file_alone_but_not_the_same_text_in_a_string():
    skipped = "# devfix: skip-file\nimport torch\nx = torch.ones(2).cuda()\n"
    assert fix_code(skipped) == (skipped, [])
    new, _ = fix_code(SOURCE)  # the string on line 9 is not a comment
    assert new != SOURCE


def test_a_silenced_declaration_keeps_the_fixes_that_need_it_unapplied():
    source = textwrap.dedent(
        """\
        import torch

        x = torch.randn(3, 4).cuda()  # devfix: ignore[DEV001]
        print(x)
        """
    )
    new, diagnostics = fix_code(source)
    assert new == source
    assert [(d.code, d.status) for d in diagnostics] == [("DEV002", "no-fix")]
    assert "ignore[DEV001]" in diagnostics[0].hint


def test_a_line_whose_comment_says_it_fails_on_purpose_is_a_demonstration():
    """A tutorial that shows the error it teaches (pytorch-deep-learning's `tensor_on_gpu.numpy()`
    under "(this will error)", PyTorchNLPBook's "# this will break!"): the comment on the line,
    or on the line above it, marks it; the line after that is still checked, and a comment that
    only mentions an error is no such mark."""
    source = textwrap.dedent(
        """\
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
        x = torch.ones(2).to(device)
        # If the tensor is on the GPU, NumPy cannot take it (this will error)
        x.numpy()
        x.numpy()  # this will break on a GPU!
        x.numpy()
        x.numpy()  # a CUDA tensor raises an error here
        """
    )
    _, diagnostics = fix_code(source)
    assert {(d.line, d.code) for d in diagnostics} == {(8, "DEV009"), (9, "DEV009")}

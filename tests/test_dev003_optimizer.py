"""DEV003's move after an optimizer: only optimizers that make state when they are built
(Adagrad) keep it on the CPU, and a model used on the CPU before its move is reported, never
moved where it is built (that would send the earlier CPU batches to a GPU model)."""

from __future__ import annotations

from pathlib import Path

from devfix.config import Config
from devfix.engine import process_source

FIXTURES = Path(__file__).parent / "fixtures" / "DEV003"
TRAINED_ON_CPU = (FIXTURES / "ok_trained_on_cpu_then_moved.py").read_bytes()


def _findings(source: bytes):
    result = process_source(source, Config(), fix=True)
    assert result.error is None
    return result


def test_adagrad_used_on_the_cpu_before_the_move_is_reported_without_a_fix():
    source = TRAINED_ON_CPU.replace(
        b"optim.SGD(net.parameters(), lr=0.001, momentum=0.9)", b"optim.Adagrad(net.parameters(), lr=0.01)"
    )
    result = _findings(source)
    assert result.new == source
    assert [(d.line, d.code, d.status) for d in result.diagnostics] == [(23, "DEV003", "no-fix")]
    assert "after it was used on the CPU" in result.diagnostics[0].message


def test_sgd_and_adam_make_their_state_at_the_first_step():
    for optimizer in (b"optim.Adam(net.parameters())", b"optim.SGD(net.parameters(), lr=0.1)"):
        source = TRAINED_ON_CPU.replace(b"optim.SGD(net.parameters(), lr=0.001, momentum=0.9)", optimizer)
        result = _findings(source)
        assert result.new == source and result.diagnostics == []

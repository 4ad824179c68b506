"""The main proof on CPU-only CI: every fixture, run on a simulated CUDA device.

- Each fixed fixture, and each correct (`ok_`) fixture, passes `devfix verify`.
- Each positive fixture's input really is broken: it fails under `devfix verify` (a device
  bug on a GPU machine), or when run plainly on this CPU-only machine (a hard-coded CUDA
  that dies without a GPU). A fixture whose bug shows in neither (a fix for speed, a latent
  bug no line of the script reaches) says so with `# devfix: input-runs`, so the list of
  such fixtures is explicit and reviewed. `# devfix: no-verify` (with its reason on the
  line) leaves out a fixture the simulator cannot model; `# devfix: verify-devices=2`
  verifies on two simulated GPUs (`cuda:1`); `# devfix: verify-same-machine` verifies
  without `--cpu-only-load` (a checkpoint saved and loaded in one run, on one machine).

Where a real CUDA device is present (the `gpu` tests), the simulator is checked against it:
each positive input fails on the real GPU exactly when it fails on the simulated one.
"""

from __future__ import annotations

import json

import pytest
from fixture_cases import all_cases
from script_runner import real_gpu_count, run_with_probe

from devfix.engine import fix_code

CASES = [c for c in all_cases() if c.runnable and "no-verify" not in c.directives]
POSITIVE = [c for c in CASES if not c.negative]


def _verify(script_runner, script, tmp_path, case):
    devices = next((d.split("=", 1)[1] for d in case.directives if d.startswith("verify-devices=")), "1")
    load = [] if "verify-same-machine" in case.directives else ["--cpu-only-load"]
    returncode, output = script_runner.run(
        ["-m", "devfix.verify", "--json", *load, "--devices", devices, script], cwd=tmp_path
    )
    report = {}
    for line in reversed(output.strip().splitlines()):
        try:
            report = json.loads(line)
            break
        except ValueError:
            continue
    return returncode, report, output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fixed_or_correct_fixture_passes_on_simulated_gpu(case, tmp_path, script_runner):
    new, _ = fix_code(case.source(), case.config)
    script = tmp_path / f"{case.rule}_{case.name}.py"
    script.write_text(new, encoding="utf-8")
    returncode, report, output = _verify(script_runner, script, tmp_path, case)
    assert returncode == 0, output[-3000:]
    assert report.get("verdict") == "ok"


@pytest.mark.parametrize("case", POSITIVE, ids=[c.id for c in POSITIVE])
def test_input_fixture_fails_on_gpu_or_on_cpu(case, tmp_path, script_runner):
    script = tmp_path / f"{case.rule}_{case.name}.py"
    script.write_text(case.source(), encoding="utf-8")
    verify_code, _report, verify_output = _verify(script_runner, script, tmp_path, case)
    cpu_code, _cpu_output = script_runner.run([script], cwd=tmp_path)
    fails = verify_code != 0 or cpu_code != 0
    if "input-runs" in case.directives:
        assert not fails, "declared `input-runs`, but the input fails: drop the directive"
    else:
        assert fails, f"the input runs cleanly on the simulated GPU and on the CPU:\n{verify_output[-1500:]}"


def _cross_machine(case) -> bool:
    """A checkpoint saved on a GPU and loaded where there is none: one machine cannot show it."""
    return case.rule == "DEV010" and "verify-same-machine" not in case.directives


@pytest.mark.gpu
@pytest.mark.parametrize("case", POSITIVE, ids=[c.id for c in POSITIVE])
def test_simulated_gpu_agrees_with_the_real_one_on_each_input(case, tmp_path, script_runner):
    """`devfix verify` is only worth its verdicts if the hardware gives the same ones: an
    input that fails on the simulated device fails on the real one, and one that runs there
    runs here."""
    if _cross_machine(case):
        pytest.skip("a cross-machine checkpoint load: one machine cannot show it")
    if "verify-devices=2" in case.directives and real_gpu_count() < 2:
        pytest.skip("verified on two simulated GPUs; this machine has one")
    script = tmp_path / f"{case.rule}_{case.name}.py"
    script.write_text(case.source(), encoding="utf-8")
    verify_code, _report, verify_output = _verify(script_runner, script, tmp_path, case)
    real = run_with_probe(script, cuda=True)
    simulated_fails, real_fails = verify_code != 0, real.returncode != 0
    assert simulated_fails == real_fails, (
        f"simulated GPU {'fails' if simulated_fails else 'runs'}, real GPU {'fails' if real_fails else 'runs'}\n"
        f"simulated:\n{verify_output[-1200:]}\nreal:\n{real.stderr[-1200:]}"
    )

"""Must-fail and must-pass scripts, each verified in its own subprocess."""

import json
import os

import pytest
from verify_cases import (
    EXACT,
    INDEXING_RAISES,
    MUST_FAIL,
    MUST_PASS,
    PROJECT_FAIL,
    PROJECT_PASS,
    TWO_GPUS,
)
from verify_helpers import SCRIPTS, bug_line, run_verify

from devfix.verify import run_script


@pytest.mark.parametrize("script,rule,opts", MUST_FAIL, ids=[m[0] for m in MUST_FAIL])
def test_must_fail_json(script, rule, opts):
    proc = run_verify("--json", *opts, script)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "device-error"
    assert report["rule"] == rule, report
    assert report["file"].endswith(script)
    assert report["line"] == bug_line(script), report
    assert report["message"]


@pytest.mark.parametrize("script,rule,opts", MUST_FAIL, ids=[m[0] for m in MUST_FAIL])
def test_must_fail_text(script, rule, opts):
    proc = run_verify(*opts, script)
    assert proc.returncode == 1
    first = next(ln for ln in proc.stdout.splitlines() if f"{script}:{bug_line(script)}: device" in ln)
    assert first
    if rule:
        assert f"hint: {rule} " in proc.stdout
    else:
        assert "hint:" not in proc.stdout


@pytest.mark.parametrize("script,opts", MUST_PASS, ids=[m[0] for m in MUST_PASS])
def test_must_pass(script, opts):
    proc = run_verify(*opts, script)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("verify: OK — ") and "tensors placed on the simulated cuda:0" in last


def test_exact_messages():
    """The raised errors carry the text real CUDA PyTorch uses."""
    expect = {
        "fail_cpu_batch_gpu_model.py": "Expected all tensors to be on the same device, but found "
        "at least two devices, cuda:0 and cpu!",
        "fail_numpy_output.py": "can't convert cuda:0 device type tensor to numpy. Use "
        "Tensor.cpu() to copy the tensor to host memory first.",
        "fail_pin_gpu_dataset.py": "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned",
        "fail_getitem_worker.py": "Cannot re-initialize CUDA in forked subprocess. To use CUDA "
        "with multiprocessing, you must use the 'spawn' start method",
        "fail_dataparallel_cpu_model.py": "module must have its parameters and buffers on device "
        "cuda:0 (device_ids[0]) but found one of them on device: cpu",
        "fail_lstm_h0.py": "Input and hidden tensors are not at the same device, found input "
        "tensor at cuda:0 and hidden tensor at cpu",
    }
    for script, msg in expect.items():
        report = json.loads(run_verify("--json", script).stdout)
        assert report["message"] == msg, (script, report["message"])
    report = json.loads(run_verify("--json", "--cpu-only-load", "fail_load_no_map_location.py").stdout)
    assert report["message"].startswith(
        "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False"
    )


def test_report_names_operation_and_devices():
    report = json.loads(run_verify("--json", "fail_cpu_batch_gpu_model.py").stdout)
    assert report["operation"] == "linear()"
    assert report["devices"] == {"input": "cpu", "weight": "cuda:0"}
    assert report["rule_name"] == "batch-to-device"
    assert set(report) >= {
        "verdict",
        "file",
        "line",
        "operation",
        "devices",
        "rule",
        "message",
        "tensors_on_device",
        "seconds",
    }
    text = run_verify("fail_cpu_batch_gpu_model.py").stdout
    assert (
        f"fail_cpu_batch_gpu_model.py:{bug_line('fail_cpu_batch_gpu_model.py')}: device mismatch "
        "in linear(): input on cpu, weight on cuda:0" in text
    )


def test_conv_message():
    import os
    import tempfile
    import textwrap

    src = textwrap.dedent("""
        import torch, torch.nn as nn
        conv = nn.Conv2d(1, 2, 3).cuda()
        conv(torch.randn(1, 1, 5, 5))
    """)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "conv.py")
        with open(path, "w") as fh:
            fh.write(src)
        report = json.loads(run_verify("--json", path).stdout)
    assert report["message"].startswith(
        "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same"
    )
    # the input is `torch.randn(...)`'s own result, made outside any loop: devfix creates it
    # with `device=` (DEV008), and verify names that rule
    assert report["line"] == 4 and report["rule"] == "DEV008"


def test_script_error_is_not_a_device_error():
    proc = run_verify("--json", "script_error.py", "a", "--b")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["verdict"] == "script-error"
    assert report["line"] == 6 and "boom from the script" in report["message"]
    assert "args ['a', '--b']" in proc.stderr  # script output goes to stderr with --json
    text = run_verify("script_error.py").stdout
    assert "the script failed (not a device error)" in text


def test_clean_sys_exit_and_device_api():
    proc = run_verify("clean_exit.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "True 1" in proc.stdout


@pytest.mark.parametrize(
    "script,feature",
    [
        ("unsupported_compile.py", "torch.compile"),
        ("unsupported_autocast.py", "autocast"),
        ("unsupported_sparse_on_gpu.py", "sparse_coo_tensor"),
    ],
)
def test_unsupported(script, feature):
    proc = run_verify("--json", script)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["verdict"] == "unsupported" and feature in report["operation"]
    assert "unsupported: " in run_verify(script).stdout


def test_usage_errors():
    proc = run_verify("does_not_exist.py")
    assert proc.returncode == 2


def test_run_script_api():
    bad = run_script(f"{SCRIPTS}/fail_lstm_h0.py")
    assert (bad.verdict, bad.exit_code, bad.rule) == ("device-error", 1, "DEV007")
    assert bad.line == bug_line("fail_lstm_h0.py")
    good = run_script(f"{SCRIPTS}/pass_load_map_location.py", cpu_only_load=True)
    assert good.ok and good.exit_code == 0
    assert good.report["tensors_on_device"] > 0
    assert run_script(f"{SCRIPTS}/fail_load_no_map_location.py", cpu_only_load=True).rule == "DEV010"


def test_buggy_example_is_reported_where_it_fails_and_where_the_batch_came_from():
    """`devfix verify examples/cnn_classifier.py`: the conv call in forward, and the loop line."""
    import os

    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cnn_classifier.py")
    with open(example) as handle:
        source = handle.read().splitlines()
    forward_line = next(i for i, line in enumerate(source, 1) if "self.conv1(x)" in line)
    loop_line = next(i for i, line in enumerate(source, 1) if "criterion(model(inputs), targets)" in line)
    proc = run_verify("--json", os.path.abspath(example))
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert (report["line"], report["rule"]) == (forward_line, "DEV004")
    assert report["called_from"][0].endswith(f"cnn_classifier.py:{loop_line}")


@pytest.mark.parametrize("script", sorted(EXACT))
def test_exact_messages_indexing_and_multi_gpu(script):
    """The texts of real CUDA PyTorch 2.13 for the indexing and multi-GPU scripts."""
    opts = next(o for s, _, o in MUST_FAIL if s == script)
    report = json.loads(run_verify("--json", *opts, script).stdout)
    assert report["message"] == EXACT[script], report


def test_invalid_device_ordinal_on_one_gpu():
    """cuda:1 on a one-GPU machine: what real CUDA raises (not 'unsupported'), and a way out."""
    proc = run_verify("fail_cuda1_one_gpu.py")
    assert "CUDA error: invalid device ordinal" in proc.stdout
    assert "run with --devices 2" in proc.stdout and "unsupported" not in proc.stdout
    assert proc.stdout.strip().endswith("s") and "simulated cuda:0," in proc.stdout


def test_dataparallel_attribute_names_the_replica():
    report = json.loads(run_verify("--json", *TWO_GPUS, "fail_dataparallel_attribute.py").stdout)
    assert report["devices"] == {"self": "cuda:1", "other": "cuda:0"}
    assert "DataParallel replica 1 on cuda:1" in report["detail"], report["detail"]


def _case_line(case):
    with open(os.path.join(SCRIPTS, "indexing_cases.py"), encoding="utf-8") as fh:
        return next(no for no, line in enumerate(fh, 1) if line.lstrip().startswith(f'"{case}":'))


def test_indexing_allowed_cases_pass():
    proc = run_verify("indexing_cases.py", "allowed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cpu[gpu_scalar] -> cpu" in proc.stdout and "gpu[cpu_index] -> cuda:0" in proc.stdout


@pytest.mark.parametrize("case", sorted(INDEXING_RAISES))
def test_indexing_raising_cases(case):
    proc = run_verify("--json", "indexing_cases.py", case)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["message"] == INDEXING_RAISES[case]
    lines = [report["line"]] + [int(c.rsplit(":", 1)[1]) for c in report["called_from"]]
    assert _case_line(case) in lines, (case, report)


@pytest.mark.parametrize("argv,real,file,rule", PROJECT_FAIL, ids=[" ".join(c[0]) for c in PROJECT_FAIL])
def test_project_fails_in_the_sibling_module(argv, real, file, rule):
    report = json.loads(run_verify("--json", *argv).stdout)
    assert report["verdict"] == "device-error", report
    assert report["file"] == os.path.join(SCRIPTS, file)
    assert (report["line"], report["rule"]) == (bug_line(file), rule)
    assert report["called_from"], report  # the entry script's line that called it


@pytest.mark.parametrize("argv,real", PROJECT_PASS, ids=[" ".join(c[0]) for c in PROJECT_PASS])
def test_project_passes_when_fixed(argv, real):
    proc = run_verify(*argv)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("verify: OK")


def test_project_folder_usage_errors(tmp_path):
    for name in ("train.py", "main.py"):
        (tmp_path / name).write_text("print('hi')\n")
    proc = run_verify("--json", str(tmp_path))
    assert proc.returncode == 2
    message = json.loads(proc.stdout)["message"]
    assert "several entry scripts (train.py, main.py)" in message and "pass the one to run" in message


def test_checkpoint_saved_on_the_second_gpu(tmp_path):
    """Saved on a two-GPU box (cuda:1 storages), loaded on a one-GPU one: torch.load's own error."""
    ckpt = tmp_path / "ckpt.pt"
    (tmp_path / "save.py").write_text(
        f"import torch\ntorch.save({{'w': torch.ones(2, device='cuda:1')}}, {str(ckpt)!r})\n"
    )
    (tmp_path / "load.py").write_text(f"import torch\nstate = torch.load({str(ckpt)!r})\nprint(state['w'].device)\n")
    assert run_verify(*TWO_GPUS, str(tmp_path / "save.py")).returncode == 0
    report = json.loads(run_verify("--json", str(tmp_path / "load.py")).stdout)
    assert (report["line"], report["rule"]) == (2, "DEV010")
    assert report["message"] == (
        "Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. "
        "Please use torch.load with map_location to map your storages to an existing device."
    )
    two = run_verify(*TWO_GPUS, str(tmp_path / "load.py"))
    assert two.returncode == 0 and "cuda:1" in two.stdout

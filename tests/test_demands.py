"""Calls that ask for a GPU through a callee's parameters (demands.py), and what follows:
code that cannot run without a GPU whatever devfix does keeps its hard-coded CUDA."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst
from project_runs import project_findings

from devfix.analysis.demands import cuda_switch_params
from devfix.analysis.tree import Tree
from devfix.config import Config
from devfix.results import FileResult
from devfix.runner import process_project

CASE = Path(__file__).parent / "fixtures" / "projects" / "ok_gpu_by_default_helper"


def _defaults(source: str) -> frozenset:
    tree = Tree(cst.parse_module(source))
    function = next(s for s in tree.module.body if isinstance(s, cst.FunctionDef))
    return cuda_switch_params(tree.data, function)


def test_a_true_default_that_guards_a_cuda_call_asks_for_a_gpu():
    assert _defaults("def f(x, cuda=True):\n    if cuda:\n        x = x.cuda()\n    return x\n") == {("cuda", True)}


def test_other_defaults_and_guards_do_not():
    assert _defaults("def f(x, cuda=False):\n    if cuda:\n        x = x.cuda()\n    return x\n") == frozenset()
    assert _defaults("def f(x, get_pos=False):\n    if get_pos:\n        x = x.cuda()\n    return x\n") == frozenset()
    assert (
        _defaults("def f(x, cpu=True):\n    if cpu:\n        return x\n    else:\n        return x.cuda()\n")
        == frozenset()
    )
    assert (
        _defaults("def f(x, cuda=True):\n    if cuda and x.numel():\n        x = x.cuda()\n    return x\n")
        == frozenset()
    )
    assert (
        _defaults(
            "def f(x, a, cuda=True):\n    if a:\n        pass\n    elif cuda:\n        x = x.cuda()\n    return x\n"
        )
        == frozenset()
    )
    assert (
        _defaults(
            "def f(x, cuda=True):\n    def g(cuda):\n        if cuda:\n            return x.cuda()\n    return g\n"
        )
        == frozenset()
    )


NMS_WRAPPER = (
    "import torch\nif torch.cuda.is_available():\n    from nms_gpu import nms_gpu\nfrom nms_cpu import nms_cpu\n\n"
    "def nms(dets, thresh, force_cpu=False):\n"
    "    return nms_gpu(dets, thresh) if force_cpu == False else nms_cpu(dets, thresh)\n"
)


def test_a_false_default_that_picks_a_name_imported_only_with_cuda_asks_unless_set():
    """Faster R-CNN's `nms_wrapper.py`: `nms_gpu` exists only where CUDA is available, and
    `force_cpu=False` picks it."""
    assert _defaults(NMS_WRAPPER) == {("not force_cpu", True)}
    assert _defaults(NMS_WRAPPER.replace("force_cpu == False", "not force_cpu")) == {("not force_cpu", True)}
    assert _defaults(NMS_WRAPPER.replace("force_cpu=False", "force_cpu=True")) == frozenset()
    unguarded = NMS_WRAPPER.replace("if torch.cuda.is_available():\n    from", "from")
    assert _defaults(unguarded) == frozenset()  # an import every machine makes: no demand
    chosen = "def f(x, cuda=True):\n    return x.cuda() if cuda else x\n"
    assert _defaults(chosen) == {("cuda", True)}


def test_a_detector_script_asks_through_its_nms_unless_it_forces_the_cpu(tmp_path):
    case = (
        Path(__file__).parent / "fixtures" / "projects" / "ok_detector_test_whose_nms_dispatches_to_a_gpu_only_import"
    )
    shutil.copytree(case, tmp_path / "p")
    assert project_findings(tmp_path / "p", {}) == []
    script = (case / "test_net.py").read_text().replace("nms(dets, 0.3)", "nms(dets, 0.3, force_cpu=True)")
    found = project_findings(tmp_path / "p", {"test_net.py": script})
    assert [f for f in found if "DEV002" in f] == ["test_net.py:16 DEV002", "test_net.py:17 DEV002"]


def test_a_script_that_converts_with_the_default_needs_a_gpu(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    assert project_findings(tmp_path / "p", {}) == []


def test_a_script_that_says_cuda_false_runs_without_a_gpu(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    script = (
        "import numpy as np\nimport torch.nn as nn\n\nimport tools\n\n"
        "model = nn.Linear(4, 2).cuda()\nx = tools.totensor(np.zeros((1, 4), dtype=np.float32), cuda=False)\n"
        "print(tools.tonumpy(model(x.cuda())))\n"
    )
    found = project_findings(tmp_path / "p", {"predict.py": script})
    assert "predict.py:6 DEV002" in found and "predict.py:8 DEV002" in found
    assert not any(f.startswith("train.py") for f in found)


def test_a_function_that_calls_gpu_code_needs_a_gpu_too(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    script = (
        "import numpy as np\nimport torch.nn as nn\n\nimport tools\n\n\n"
        "def batch():\n    return tools.totensor(np.zeros((1, 4), dtype=np.float32))\n\n\n"
        "def main():\n    model = nn.Linear(4, 2).cuda()\n    print(model(batch()))\n\n\nmain()\n"
    )
    assert project_findings(tmp_path / "p", {"infer.py": script}) == []


def test_a_submodule_imported_by_name_is_analysed_first(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    (tmp_path / "p" / "utils").mkdir()
    (tmp_path / "p" / "utils" / "__init__.py").write_text("")
    shutil.move(str(tmp_path / "p" / "tools.py"), str(tmp_path / "p" / "utils" / "tools.py"))
    train = (tmp_path / "p" / "train.py").read_text().replace("import tools\n", "from utils import tools\n")
    (tmp_path / "p" / "train.py").write_text(train)
    reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted((tmp_path / "p").rglob("*.py"))]
    assert [d.code for r in process_project(reads, Config(), fix=False) for d in r.diagnostics] == []


def test_a_script_that_imports_the_runs_cuda_extension_needs_a_gpu(tmp_path):
    setup = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(name='fastsig', ext_modules=[CUDAExtension('fastsig', ['fastsig.cu'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"
    )
    test = (
        "import torch\nimport fastsig\n\n\ndef main():\n    x = torch.randn(4).cuda()\n"
        "    print(fastsig.forward(x))\n\n\nmain()\n"
    )
    (tmp_path / "setup.py").write_text(setup)
    (tmp_path / "test_ext.py").write_text(test)
    assert project_findings(tmp_path, {}) == []
    # without the extension, the same `.cuda()` crashes a CPU-only machine for nothing
    (tmp_path / "test_ext.py").write_text(
        test.replace("import fastsig\n", "").replace("fastsig.forward(x)", "x.sigmoid()")
    )
    assert project_findings(tmp_path, {}) == ["test_ext.py:5 DEV001", "test_ext.py:5 DEV002"]


def test_a_helper_that_returns_before_its_gpu_call_does_not_need_a_gpu(tmp_path):
    """`init_distributed_mode(args)` returns early without a cluster: its callers run on the CPU."""
    dist = (
        "import os\nimport torch\n\n\ndef init_distributed_mode(args):\n    if 'RANK' not in os.environ:\n"
        "        args.distributed = False\n        return\n    args.distributed = True\n"
        "    torch.cuda.set_device(args.gpu)\n"
    )
    train = (
        "import argparse\nimport torch\n\nimport dist\n\n\ndef main(args):\n    dist.init_distributed_mode(args)\n"
        "    x = torch.randn(2).cuda()\n    print(x)\n\n\nmain(argparse.Namespace(gpu=0))\n"
    )
    assert "train.py:9 DEV002" in project_findings(tmp_path, {"dist.py": dist, "train.py": train})


def test_a_script_that_imports_a_module_no_parser_reads_never_runs(tmp_path):
    """`input.cuda(async=True)` is a SyntaxError since Python 3.7: `import utils` fails, and
    nothing after it runs on any machine (modelled on an SWA training script)."""
    utils = (
        "import torch\n\n\ndef train_epoch(loader, model):\n    for x, y in loader:\n        x = x.cuda(async=True)\n"
    )
    train = "import torch\nimport utils\n\nmodel = torch.nn.Linear(2, 2).cuda()\n"
    assert project_findings(tmp_path, {"utils.py": utils, "train.py": train}) == []
    utils = utils.replace("async=True", "non_blocking=True")
    assert project_findings(tmp_path, {"utils.py": utils}) == ["train.py:4 DEV001", "train.py:4 DEV002"]


def test_a_script_whose_import_chain_reaches_a_module_no_parser_reads_never_runs(tmp_path):
    """beta-tcvae's metrics script imports a loader that imports the Python 2 model file:
    the loader fails on import, so the script does too, and its `.cuda()` calls never run."""
    vae = "import torch.nn as nn\n\n\nclass VAE(nn.Module):\n    def forward(self, x):\n        return x.cuda(async=True)\n"
    loader = "import torch\n\nimport vae\n\n\ndef load_model(path):\n    return vae.VAE()\n"
    metrics = (
        "import torch\n\nfrom loader import load_model\n\n\ndef entropies(z):\n"
        "    return z[:, torch.randperm(z.size(1)).cuda()]\n\n\nprint(entropies(torch.randn(4, 20)))\n"
    )
    files = {"vae.py": vae, "loader.py": loader, "metrics.py": metrics}
    assert project_findings(tmp_path, files) == []
    files["vae.py"] = vae.replace("async=True", "non_blocking=True")
    assert "metrics.py:7 DEV002" in project_findings(tmp_path, files)


def test_a_function_that_tests_its_callers_gpu_switch_gets_no_device_of_its_own(tmp_path):
    """3DUnetCNN: `batch_loss(..., n_gpus=0)` tests its caller's GPU count (`if n_gpus is not
    None:`, always true) around `images.cuda()`. The model it gets comes from another file, so
    its device is unknown here, and a cuda-if-available device would still send the batch to
    the GPU when the configuration keeps the model on the CPU: the `.cuda()` is reported, with
    no fix and no declaration."""
    utils = (
        "def batch_loss(model, images, target, criterion, n_gpus=0):\n"
        "    if n_gpus is not None:\n        images = images.cuda()\n        target = target.cuda()\n"
        "    return criterion(model(images), target)\n"
    )
    train = (
        "import json\nimport torch\nimport torch.nn as nn\nfrom training_utils import batch_loss\n\n"
        "config = json.loads('{\"n_gpus\": 0}')\nmodel = getattr(nn, 'Linear')(8, 3)\n"
        "if config['n_gpus'] > 0:\n    model = model.cuda()\n"
        "print(batch_loss(model, torch.randn(4, 8), torch.zeros(4).long(), nn.CrossEntropyLoss(), config['n_gpus']))\n"
    )
    (tmp_path / "training_utils.py").write_text("import torch\n\n\n" + utils)
    (tmp_path / "train.py").write_text(train)
    reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted(tmp_path.glob("*.py"))]
    found = [
        (Path(r.path).name, d.line, d.code, d.status)
        for r in process_project(reads, Config(), fix=False)
        for d in r.diagnostics
    ]
    assert found == [
        ("training_utils.py", 6, "DEV002", "no-fix"),
        ("training_utils.py", 7, "DEV002", "no-fix"),
    ]


ATTACKS = Path(__file__).parent / "fixtures" / "projects" / "ok_attack_examples_keep_the_cuda_default_of_a_base_attack"


def test_an_attack_built_for_the_gpu_by_name_needs_a_gpu_too(tmp_path):
    """`FGSM(model, device="cuda")` turns on the default the constructor hands its base class."""
    shutil.copytree(ATTACKS, tmp_path / "p")
    script = (ATTACKS / "test_fgsm.py").read_text().replace("FGSM(model)", 'FGSM(model, device="cuda")')
    assert project_findings(tmp_path / "p", {"test_fgsm.py": script}) == []


def test_an_attack_built_for_the_cpu_leaves_the_scripts_cuda_a_bug(tmp_path):
    shutil.copytree(ATTACKS, tmp_path / "p")
    script = (ATTACKS / "test_fgsm.py").read_text().replace("FGSM(model)", 'FGSM(model, device="cpu")')
    found = project_findings(tmp_path / "p", {"test_fgsm.py": script})
    assert "test_fgsm.py:12 DEV002" in found and "test_fgsm.py:13 DEV002" in found

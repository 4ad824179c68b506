"""Classes and functions that only GPU-only code of the run uses (users.py, spec principle 9)."""

from __future__ import annotations

import shutil
from pathlib import Path

from project_runs import project_findings

from devfix.config import Config
from devfix.results import FileResult
from devfix.runner import process_project

CASE = Path(__file__).parent / "fixtures" / "projects" / "ok_model_used_only_by_gpu_script"


def test_a_model_only_a_gpu_only_script_builds_is_left_alone(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    assert project_findings(tmp_path / "p", {}) == []


def test_one_script_that_runs_without_a_gpu_makes_its_cuda_a_bug(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    predict = (
        "import torch\nfrom model import Decoder, Seq2Seq\n\n"
        "model = Seq2Seq(Decoder(20, 16))\nprint(model(torch.randint(0, 20, (1, 5)), steps=5).shape)\n"
    )
    assert "model.py:27 DEV002" in project_findings(tmp_path / "p", {"predict.py": predict})


def test_a_class_handed_to_other_code_is_not_known_to_be_gpu_only(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    registry = "from model import Seq2Seq\n\nMODELS = {'seq2seq': Seq2Seq}\n"
    assert "model.py:27 DEV002" in project_findings(tmp_path / "p", {"registry.py": registry})


def test_a_librarys_class_of_the_same_name_is_no_mention_of_the_projects(tmp_path):
    """RWKV's sub-projects: one file's `MMapIndexedDataset(torch.utils.data.Dataset)` and
    another's `class Dataset(Dataset)` over PyTorch's name the library's class, so they hand
    the GPU-only script's own class of that name to nobody."""
    shutil.copytree(CASE, tmp_path / "p")
    other = (
        "import torch\nimport torch.nn as nn\nfrom torch.nn import Module as Seq2Seq\n\n\n"
        "class Indexed(torch.nn.Seq2Seq):\n    pass\n\n\nclass Wrapped(Seq2Seq):\n    pass\n\n\n"
        "class Seq2Seq(Seq2Seq):\n    pass\n\n\nLAYERS = [nn.Seq2Seq]\n"
    )
    assert project_findings(tmp_path / "p", {"layers.py": other}) == []


def test_a_projects_class_named_after_its_library_base_is_still_a_mention(tmp_path):
    """After `class Seq2Seq(Seq2Seq)` the name is the file's own class: a subclass of it there
    is no library's."""
    shutil.copytree(CASE, tmp_path / "p")
    other = (
        "from torch.nn import Module as Seq2Seq\n\n\nclass Seq2Seq(Seq2Seq):\n    pass\n\n\nREGISTRY = {'s': Seq2Seq}\n"
    )
    assert "model.py:27 DEV002" in project_findings(tmp_path / "p", {"layers.py": other})


SUBCLASS = (
    "from model import Seq2Seq\n\n\nclass Translator(Seq2Seq):\n    def greedy(self, source):\n"
    "        return self(source, steps=3).argmax(-1)\n"
)


def test_a_base_class_only_gpu_only_subclasses_extend_stays_gpu_only(tmp_path):
    """hgraph2graph's `class HierCondVGNN(HierVGNN)`: both built only after a GPU-only step, so
    naming the base in the subclass's header does not make it run without a GPU."""
    shutil.copytree(CASE, tmp_path / "p")
    gpu_translate = (
        "import torch\nfrom model import Decoder\nfrom translator import Translator\n\n"
        "assert torch.cuda.is_available()\nmodel = Translator(Decoder(20, 16)).cuda()\n"
        "print(model.greedy(torch.randint(0, 20, (1, 5)).cuda()))\n"
    )
    assert project_findings(tmp_path / "p", {"translator.py": SUBCLASS, "translate.py": gpu_translate}) == []


def test_a_subclass_built_without_a_gpu_makes_its_base_run(tmp_path):
    shutil.copytree(CASE, tmp_path / "p")
    translate = (
        "import torch\nfrom model import Decoder\nfrom translator import Translator\n\n"
        "model = Translator(Decoder(20, 16))\nprint(model.greedy(torch.randint(0, 20, (1, 5))))\n"
    )
    assert "model.py:27 DEV002" in project_findings(
        tmp_path / "p", {"translator.py": SUBCLASS, "translate.py": translate}
    )


def test_a_user_whose_failures_are_caught_still_runs_it(tmp_path):
    """`try: runner = Model(...) ... except Exception: log it` runs on a CPU-only machine: the
    catch does not make the call GPU-only."""
    shutil.copytree(CASE, tmp_path / "p")
    main = (
        "import torch\nfrom model import Decoder, Seq2Seq\n\ntry:\n    model = Seq2Seq(Decoder(20, 16))\n"
        "    print(model(torch.randint(0, 20, (1, 5)), steps=5).shape)\nexcept Exception as error:\n    print(error)\n"
    )
    assert "model.py:27 DEV002" in project_findings(tmp_path / "p", {"main.py": main})


BROKEN = Path(__file__).parent / "fixtures" / "scripts_python_cannot_compile"


def test_code_only_scripts_python_cannot_compile_use_is_left_alone(tmp_path):
    """darts' Python 2 training scripts (`print "..."`) are the only users of its search model:
    they never run, so neither does the model's `.cuda()`."""
    shutil.copytree(BROKEN, tmp_path / "p")
    assert project_findings(tmp_path / "p", {}) == []


def test_a_script_python_can_run_makes_that_code_run(tmp_path):
    shutil.copytree(BROKEN, tmp_path / "p")
    search = "import torch\nfrom model_search import Network\n\nprint(Network(16, 10).new())\n"
    assert "model_search.py:16 DEV002" in project_findings(tmp_path / "p", {"search.py": search})


def test_another_sub_projects_class_of_the_same_name_does_not_revive_it(tmp_path):
    """darts keeps two sub-projects, `cnn/` and `rnn/`, each with its own `model_search.Network`.
    A runnable `rnn/search.py` that builds rnn's `Network` writes the name too, but its call
    reaches rnn's file: cnn's copy is still used only by a script Python cannot compile."""
    shutil.copytree(BROKEN, tmp_path / "p" / "cnn")
    rnn = tmp_path / "p" / "rnn"
    rnn.mkdir()
    (rnn / "model_search.py").write_text(
        "import torch.nn as nn\n\n\nclass Network(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.fc = nn.Linear(n, n)\n\n    def forward(self, x):\n"
        "        return self.fc(x)\n"
    )
    (rnn / "search.py").write_text(
        "import torch\nfrom model_search import Network\n\nprint(Network(4)(torch.randn(2, 4)))\n"
    )
    reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted((tmp_path / "p").rglob("*.py"))]
    assert [d.code for r in process_project(reads, Config(), fix=False) for d in r.diagnostics] == []


RESNET = (
    "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.fc = nn.Linear(4, 2)\n\n    def forward(self, x):\n"
    "        lam = torch.ones(x.shape[0], 2).cuda()\n        return self.fc(x) * lam\n\n\n"
    "def resnet18():\n    return Net()\n"
)
BROKEN_MAIN = (
    "import torch\nimport models\n\nx = torch.zeros(2).cuda(async=True)\n"
    "print(models.__dict__['resnet18']()(torch.zeros(1, 4)))\n"
)


def _package_findings(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted(root.rglob("*.py"))]
    results = process_project(reads, Config(), fix=False)
    return [f"{Path(r.path).relative_to(root).as_posix()}:{d.line} {d.code}" for r in results for d in r.diagnostics]


def test_a_package_only_a_script_python_cannot_compile_imports_is_left_alone(tmp_path):
    """manifold_mixup's `main.py` writes `.cuda(async=True)` (a SyntaxError since Python 3.7)
    and picks its model by name from the `models` package it imports: no program that can
    run imports the package, though no file writes the names of what it defines."""
    files = {"models/__init__.py": "from .resnet import *\n", "models/resnet.py": RESNET, "main.py": BROKEN_MAIN}
    assert _package_findings(tmp_path, files) == []


def test_a_runnable_importer_makes_the_package_run(tmp_path):
    files = {
        "models/__init__.py": "from .resnet import *\n",
        "models/resnet.py": RESNET,
        "main.py": BROKEN_MAIN,
        "demo.py": "import torch\nimport models\n\nprint(models.resnet18()(torch.zeros(1, 4)))\n",
    }
    assert "models/resnet.py:11 DEV002" in _package_findings(tmp_path, files)


METHOD_CASE = (
    Path(__file__).parent / "fixtures" / "projects" / "ok_loss_reached_only_through_a_method_gpu_training_calls"
)


EVALUATE = (
    "import torch\nfrom models.model import WhaleNet\n\nmodel = WhaleNet()\nresults = model(torch.randn(2, 8))\n"
    "print(model.get_loss(results, torch.tensor([0, 1])).item())\n"
)


def test_a_method_that_only_gpu_only_code_calls_is_gpu_only_and_so_is_what_it_calls(tmp_path):
    """Humpback's `model.getLoss(...)`: the model is built in another file, so the call is tied
    to the one class of the run that defines `get_loss`; its loss helper is GPU-only in turn."""
    shutil.copytree(METHOD_CASE, tmp_path / "p")
    assert _package_findings(tmp_path / "p", {}) == []


def test_a_method_called_where_there_may_be_no_gpu_makes_its_helpers_cuda_a_bug(tmp_path):
    shutil.copytree(METHOD_CASE, tmp_path / "p")
    assert "models/losses.py:7 DEV002" in _package_findings(tmp_path / "p", {"evaluate.py": EVALUATE})


def test_a_method_name_two_classes_define_is_nobodys(tmp_path):
    shutil.copytree(METHOD_CASE, tmp_path / "p")
    other = "class Baseline:\n    def get_loss(self, results, labels):\n        return 0.0\n"
    assert "models/losses.py:7 DEV002" in _package_findings(tmp_path / "p", {"baseline.py": other})


def test_a_method_handed_to_other_code_is_not_known_to_be_gpu_only(tmp_path):
    shutil.copytree(METHOD_CASE, tmp_path / "p")
    hooks = "from models.model import WhaleNet\n\nLOSSES = {'rank': WhaleNet().get_loss}\n"
    assert "models/losses.py:7 DEV002" in _package_findings(tmp_path / "p", {"hooks.py": hooks})


def test_a_files_mentions_read_once_answer_every_question_of_names():
    """users.mentioned_elsewhere (every name at once, read once per run) and the question for a
    few names (named_elsewhere, the visitor that only looks for them) agree, whatever the names:
    a call's function is never a mention, a definition's own body is not, an argument is."""
    from itertools import combinations

    from devfix.analysis import users

    source = (
        b"import torch\nfrom model import Net, Head\n\n"
        b"class Net(torch.nn.Module):\n    def build(self):\n        return Net()\n\n"
        b"def train(model=Head):\n    net = Net()\n    run(Head, key=Loss)\n    obj.Net.build(Head())\n"
        b"    isinstance(net, Head)\n    return registry.Loss(x, fn=build)\n"
    )
    every = users.mentioned_elsewhere(source)
    assert every is not None and {"Head", "Loss", "build", "Net"} <= every.names and not {"train", "run"} & every.names
    names = ("Net", "Head", "Loss", "build", "run", "train", "obj")
    for size in (1, 2, 3):
        for asked in combinations(names, size):
            finder = users._AstMentions(frozenset(asked))
            finder.visit(__import__("ast").parse(source))
            asked_names = frozenset(asked)
            assert users.named_elsewhere(source, asked_names).names == finder.elsewhere == every.names & asked_names


EVERY_BRANCH = Path(__file__).parent / "fixtures" / "projects" / "ok_training_loop_reached_after_a_gpu_on_every_branch"


def test_a_branch_without_a_gpu_demand_lets_the_loop_run_on_a_cpu(tmp_path):
    """HRNet's `if distributed: ... else: nn.DataParallel(model, device_ids=gpus).cuda()` asks
    for a GPU on both ways; with a plain `else: model = model` the training step can run on a
    CPU-only machine, and its `.cuda()` calls are bugs again."""
    shutil.copytree(EVERY_BRANCH, tmp_path / "p")
    train = tmp_path / "p" / "train.py"
    train.write_text(train.read_text().replace("nn.DataParallel(model, device_ids=GPUS).cuda()", "model"))
    assert "function.py:10 DEV002" in project_findings(tmp_path / "p", {})


def test_a_reassigned_switch_is_no_earlier_demand(tmp_path):
    """`distributed = False` between the two `if distributed:` statements: the second one's
    branch no longer follows the first one's `torch.cuda.set_device`."""
    shutil.copytree(EVERY_BRANCH, tmp_path / "p")
    train = tmp_path / "p" / "train.py"
    text = train.read_text().replace(
        "    model = nn.Sequential(", "    distributed = args.local_rank > 0\n    model = nn.Sequential("
    )
    train.write_text(text)
    assert "function.py:10 DEV002" in project_findings(tmp_path / "p", {})


def test_a_variable_named_like_the_class_hands_nothing_over(tmp_path):
    """Relation-Shape-CNN's `PointcloudScale = d_utils.PointcloudScale()`: the instance is bound
    to a variable of the class's own name, in a script that needs a GPU; that binding is no
    mention of the class, which stays GPU-only."""
    shutil.copytree(CASE, tmp_path / "p")
    evaluate = (
        "import torch\nimport model as m\n\nassert torch.cuda.is_available()\n"
        "Seq2Seq = m.Seq2Seq(m.Decoder(20, 16)).cuda()\n"
        "print(Seq2Seq(torch.randint(0, 20, (1, 5)).cuda(), steps=5).shape)\n"
    )
    assert project_findings(tmp_path / "p", {"evaluate.py": evaluate}) == []


def test_a_top_level_function_of_the_same_name_is_no_rival_method(tmp_path):
    """YOLOX's `Exp.random_resize` beside a module-level `random_resize` in another file: the
    GPU-only trainer's `self.exp.random_resize(...)` is a call on an object, so the function is
    not what it reaches, and the method stays GPU-only."""
    shutil.copytree(METHOD_CASE, tmp_path / "p")
    helper = "def get_loss(results, labels):\n    return 0.0\n"
    assert _package_findings(tmp_path / "p", {"helpers.py": helper}) == []

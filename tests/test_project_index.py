"""How the files of a run find each other: import resolution and the analysis order."""

from __future__ import annotations

import os

from devfix.analysis.imports import ProjectIndex
from devfix.analysis.project import ProjectFacts
from devfix.config import Config
from devfix.results import FileResult
from devfix.runner import process_project

ROOT = os.path.abspath("proj")
FILES = {
    "proj/train.py": b"from model import Net\nimport utils\nfrom lib.data import load\n",
    "proj/model.py": b"import torch\nfrom .missing import x\n",
    "proj/utils.py": b"import os, torch\nfrom model import Net\n",
    "proj/lib/__init__.py": b"from .data import load\n",
    "proj/lib/data.py": b"from ..model import Net\nimport queue\n",
    "proj/scripts/run.py": b"from utils import helper\n",
    "proj/queue.py": b"",
}


def _index() -> ProjectIndex:
    return ProjectIndex(list(FILES))


def test_absolute_imports_resolve_from_the_importers_folder_up():
    index = _index()
    assert index.resolve("proj/train.py", "model", 0) == "proj/model.py"
    assert index.resolve("proj/train.py", "lib.data", 0) == "proj/lib/data.py"
    assert index.resolve("proj/train.py", "lib", 0) == "proj/lib/__init__.py"
    assert index.resolve("proj/scripts/run.py", "utils", 0) == "proj/utils.py"  # run from the repository


def test_relative_imports_count_their_dots():
    index = _index()
    assert index.resolve("proj/lib/__init__.py", "data", 1) == "proj/lib/data.py"
    assert index.resolve("proj/lib/data.py", "model", 2) == "proj/model.py"
    assert index.resolve("proj/lib/data.py", None, 1) == "proj/lib/__init__.py"


def test_library_and_standard_library_names_are_never_project_files():
    index = _index()
    assert index.resolve("proj/lib/data.py", "queue", 0) is None  # the standard library's, not proj/queue.py
    assert index.resolve("proj/train.py", "torch", 0) is None
    assert index.resolve("proj/train.py", "missing", 0) is None


def test_imported_files_are_analysed_first_and_cycles_do_not_hang():
    files = list(FILES.items())
    order = ProjectFacts.from_files(files).analysis_order(files)
    names = [files[i][0] for i in order]
    assert sorted(names) == sorted(FILES)
    assert names.index("proj/model.py") < names.index("proj/utils.py") < names.index("proj/train.py")
    assert names.index("proj/lib/data.py") < names.index("proj/lib/__init__.py") < names.index("proj/train.py")
    cyclic = [("a.py", b"import b\n"), ("b.py", b"import a\n")]
    assert sorted(ProjectFacts.from_files(cyclic).analysis_order(cyclic)) == [0, 1]


def _tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
    return [(str(root / name), text) for name, text in files.items()]


def _missing(files, count):
    """The missing imports of the first `count` files, from one scan of the whole run."""
    facts = ProjectFacts.from_files(files)
    return [facts.view(path, text).missing_modules for path, text in files[:count]]


def test_an_import_of_a_module_the_project_folder_lacks_is_missing(tmp_path):
    files = _tree(
        tmp_path,
        {
            "eval.py": b"import torch\nfrom data.cub import CUB\nfrom data.dogs import Dogs\nimport data.native\n"
            b"try:\n    from data.gone import x\nexcept ImportError:\n    x = None\n",
            "data/cub.py": b"class CUB: pass\n",
        },
    )
    (tmp_path / "data" / "native.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")  # built, not in the run
    # `data.dogs` cannot be imported; an extension module is there; an indented import is guarded
    assert _missing(files, 1) == [frozenset({"data.dogs"})]


def test_a_relative_import_of_a_module_the_package_lacks_is_missing(tmp_path):
    """PIDNet's `models/others/bisenet.py`, copied with `from . import model_utils` from a
    package that had the sibling: importing it fails on every machine."""
    files = _tree(
        tmp_path,
        {
            "models/others/bisenet.py": b"import torch\nfrom .resnet import Resnet18\nfrom . import model_utils\n",
            "models/others/resnet.py": b"class Resnet18: pass\n",
            "models/seg.py": b"from . import model_utils, others\nfrom .ops.nms import nms\nfrom .head import Head\n"
            b"from .others.resnet import Resnet18\nfrom . import VERSION\n",
            "models/__init__.py": b"VERSION = 1\n",
            "models/model_utils.py": b"",
            "models/ops/nms.pyx": b"",  # compiled in place: Python imports the extension it builds
            "models/ops/__init__.py": b"",
        },
    )
    assert _missing(files, 3) == [frozenset({".model_utils"}), frozenset(), frozenset({".head"})]


SELF_TEST = (
    "import torch\nimport torch.nn as nn\nfrom . import model_utils\n\n\nclass Net(nn.Module):\n"
    "    def forward(self, x):\n        return model_utils.scale(x)\n\n\nif __name__ == '__main__':\n"
    "    net = Net().cuda()\n    print(net(torch.randn(2, 3).cuda()).shape)\n"
)


def _package_codes(root):
    reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted(root.rglob("*.py"))]
    return sorted(d.code for r in process_project(reads, Config(), fix=False) for d in r.diagnostics)


def test_the_self_test_of_a_module_that_cannot_be_imported_is_left_alone(tmp_path):
    _tree(tmp_path, {"models/__init__.py": b"", "models/others/bisenet.py": SELF_TEST.encode()})
    assert _package_codes(tmp_path) == []


def test_the_self_test_of_a_module_whose_sibling_is_there_is_fixed(tmp_path):
    helper = b"def scale(x):\n    return x * 2\n"
    _tree(
        tmp_path, {"models/__init__.py": b"", "models/bisenet.py": SELF_TEST.encode(), "models/model_utils.py": helper}
    )
    assert "DEV002" in _package_codes(tmp_path)


def test_an_import_is_not_called_missing_when_python_could_find_it_elsewhere(tmp_path):
    files = _tree(
        tmp_path,
        {
            "scripts/eval.py": b"from data.dogs import Dogs\nfrom torchvision.models import nope\nfrom utils.x import y\n",
            "scripts/data/cub.py": b"",
            "data/dogs.py": b"class Dogs: pass\n",  # another `data` folder on the way up holds it
            "utils.py": b"",  # `utils` is a module: `utils.x` is not the project's missing package
        },
    )
    assert _missing(files, 1) == [frozenset()]


def test_the_projects_module_imported_under_a_root_it_no_longer_has_is_missing(tmp_path):
    """tensorboy's pose trainers: `from training.datasets.coco import get_loader`, where the
    repository's `datasets/coco.py` now lives in `lib/` and defines no `get_loader`. A vendored
    copy of an installed package mirrors the folders too, but defines what is imported."""
    files = _tree(
        tmp_path,
        {
            "train/train_old.py": b"from training.datasets.coco import get_loader\n",
            "train/vendored.py": b"from maskrcnn.datasets.coco import CocoDataset\n",
            "train/elsewhere.py": b"from training.datasets.voc import get_loader\nfrom mmdet.datasets import X\n",
            "lib/datasets/__init__.py": b"",
            "lib/datasets/coco.py": b"class CocoDataset:\n    pass\n\n\ndef build_loader():\n    pass\n",
        },
    )
    assert _missing(files, 3) == [
        frozenset({"training.datasets.coco"}),
        frozenset(),  # the project's copy defines CocoDataset: an installed `maskrcnn` may mirror it
        frozenset(),  # no project file is `datasets/voc.py`; `mmdet.datasets` names two parts only
    ]


def test_a_name_no_module_of_that_name_writes_is_a_missing_import(tmp_path):
    """RepVGG's `tools/insert_bn.py`: `from utils import load_checkpoint,
    get_ImageNet_train_dataset`, and the project's `utils.py` never writes the second name.
    A module that may make names at run time (a star import, `globals()`), a folder holding a
    submodule of that name, or any other file of that module name that writes it, keeps the
    import."""
    files = _tree(
        tmp_path,
        {
            "tools/insert_bn.py": b"from utils import load_checkpoint, get_ImageNet_train_dataset\n",
            "tools/ok.py": b"from utils import load_checkpoint\n",
            "tools/star.py": b"from helpers import build\n",
            "tools/namespace.py": b"from models import resnet\n",
            "utils.py": b"def load_checkpoint(path):\n    pass\n",
            "helpers.py": b"from helpers_impl import *\n",
            "models/resnet.py": b"",
            "other/models.py": b"",
        },
    )
    assert _missing(files, 4) == [
        frozenset({"utils"}),
        frozenset(),
        frozenset(),
        frozenset(),
    ]


def test_an_import_from_a_git_submodule_the_checkout_lacks_is_missing(tmp_path):
    """mellotron's inference notebook: `from waveglow.denoiser import Denoiser`, where
    `.gitmodules` declares `waveglow` and the clone has no such folder (or an empty one). A
    submodule that is there is read like any other folder of the run."""
    files = _tree(
        tmp_path,
        {
            "inference.py": b"import torch\nfrom waveglow.denoiser import Denoiser\n",
            "train.py": b"import torch\nfrom apex.fp16 import wrap\n",
            "apex/fp16.py": b"def wrap(model):\n    return model\n",
        },
    )
    (tmp_path / ".gitmodules").write_text(
        '[submodule "waveglow"]\n\tpath = waveglow\n\turl = https://github.com/NVIDIA/waveglow.git\n'
        '[submodule "apex"]\n\tpath = apex\n\turl = https://github.com/NVIDIA/apex.git\n'
    )
    assert _missing(files, 2) == [frozenset({"waveglow.denoiser"}), frozenset()]


def test_functions_nothing_in_the_run_names_are_unreferenced(tmp_path):
    files = _tree(
        tmp_path,
        {
            # a call "commented out" in a quoted block names nothing; a short string does
            "train.py": b'from helpers import used\nused()\ncallback = \'by_string\'\n"""\nquoted()\n"""\n',
            "helpers.py": b"def used(): pass\ndef dead(): pass\ndef by_string(): pass\ndef test_me(): pass\n"
            b"def twin(): pass\ndef via_module(): pass\ndef quoted(): pass\n",
            "test_helpers.py": b"def test_used(): pass\n",  # pytest runs it by its name
            "other.py": b"def twin(): pass\ntwin()\n",  # a copy that calls itself: helpers.twin stays unnamed
            "third.py": b"import helpers\ndef via_module(): pass\nhelpers.via_module()\n",  # through the module: alive
            "lib/setup.py": b"from setuptools import setup\nsetup(name='pkg')\n",
            "lib/pkg/__init__.py": b"",
            "lib/pkg/api.py": b"def public(): pass\n",  # an installable package's functions are its API
            "utils/__init__.py": b"from .misc import *\n",
            "utils/misc.py": b"def sliced(): pass\n",  # a package nothing installs: only the run uses it
        },
    )
    facts = ProjectFacts.from_files(files)
    assert facts.unreferenced == {
        # `test_me` is no test: pytest collects `test_*.py` and `*_test.py` only
        str(tmp_path / "helpers.py"): frozenset({"dead", "twin", "test_me", "quoted"}),
        str(tmp_path / "utils" / "misc.py"): frozenset({"sliced"}),
    }


def test_a_message_names_no_function_and_an_f_string_may(tmp_path):
    """FastSpeech2's `print("TTS synthesis")` beside an uncalled `def synthesis()`: a string
    with a space is a message, not a name looked up; an f-string holds code."""
    files = _tree(
        tmp_path,
        {
            "inference.py": b'from steps import shown\nprint("TTS synthesis")\nprint(f"{shown()} done")\n'
            b"key = 'plain'\nprint('a long message about lookup')\n",
            "steps.py": b"def synthesis(): pass\ndef shown(): pass\ndef plain(): pass\ndef lookup(): pass\n",
        },
    )
    assert ProjectFacts.from_files(files).unreferenced == {
        str(tmp_path / "steps.py"): frozenset({"synthesis", "lookup"})
    }


def test_an_objects_or_a_librarys_method_of_the_same_name_is_no_use_of_a_function(tmp_path):
    """GraphCL's test script: an uncalled `def argmax()` is not called by `logits.argmax()` nor
    by `torch.argmax(x)`; `common.steps.shown()` and `from . import steps` reach the run's own."""
    files = _tree(
        tmp_path,
        {
            "common/__init__.py": b"",
            "common/steps.py": b"def argmax(): pass\ndef shown(): pass\ndef relative(): pass\ndef dynamic(): pass\n",
            # stacked_hourglass's train.py: a module imported by a name built at run time
            "dyn.py": b"import importlib\ntask = importlib.import_module('common.steps')\ntask.dynamic()\n",
            "common/run.py": b"from . import steps as s\ns.relative()\n",
            "train.py": b"import torch\nimport common.steps\nx = torch.zeros(3)\nprint(x.argmax(), torch.argmax(x))\n"
            b"common.steps.shown()\n",
        },
    )
    unreferenced = ProjectFacts.from_files(files).unreferenced
    assert unreferenced == {str(tmp_path / "common" / "steps.py"): frozenset({"argmax"})}


def test_a_pyproject_that_only_configures_tools_does_not_make_a_library(tmp_path):
    files = _tree(
        tmp_path,
        {
            "pyproject.toml": b"[tool.devfix]\nselect = ['DEV002']\n",
            "utils/__init__.py": b"",
            "utils/misc.py": b"def sliced(): pass\n",
            "train.py": b"import utils\n",
        },
    )
    assert ProjectFacts.from_files(files).unreferenced == {str(tmp_path / "utils" / "misc.py"): frozenset({"sliced"})}
    (tmp_path / "pyproject.toml").write_bytes(b"[project]\nname = 'utils'\n")
    assert ProjectFacts.from_files(files).unreferenced == {}


def test_methods_of_a_plain_class_nothing_names_are_unreferenced(tmp_path):
    files = _tree(
        tmp_path,
        {
            "main.py": b"import torch\nfrom gan import GAN\ngan = GAN()\ngan.train()\nstate = torch.load('x')\n",
            "gan.py": b"import torch\nclass GAN(object):\n    def __init__(self): pass\n\n    def train(self):\n"
            b"        # load the data\n        self.save()\n    def save(self): pass\n    def load(self): pass\n"
            b"    def by_string(self): pass\nclass Net(torch.nn.Module):\n    def unused(self): pass\n"
            b"    def forward(self, x): pass\n    def extra_repr(self): pass\nclass Sub(Net):\n    def edit(self): pass\n"
            b"class Env:\n    def test_step(self): pass\n    def step(self): pass\nattr = 'by_string'\n"
            b"class Game(gym.Env):\n    def reset(self): pass\n",
        },
    )
    facts = ProjectFacts.from_files(files)
    # `torch.load` is a module's function and the comment is English: neither names `load`;
    # a string does; torch calls a module's methods by `nn.Module`'s names only, a subclass of
    # a project module included; another framework's subclass may be called by name; a
    # `test_*` method outside a file pytest collects is no test.
    assert facts.unreferenced == {
        str(tmp_path / "gan.py"): frozenset({"GAN.load", "Env.step", "Env.test_step", "Net.unused", "Sub.edit"})
    }


def test_a_lone_file_has_no_unreferenced_functions(tmp_path):
    files = _tree(tmp_path, {"helpers.py": b"def dead(): pass\n"})
    assert ProjectFacts.from_files(files).unreferenced == {}


def test_a_file_that_looks_functions_up_at_run_time_keeps_them_all(tmp_path):
    files = _tree(
        tmp_path,
        {
            "main.py": b"import fire\ndef train(): pass\ndef generate(): pass\nif __name__ == '__main__':\n    fire.Fire()\n",
            "steps.py": b"import sys\ndef warmup(): pass\ndef run(name):\n    return globals()[name]()\n",
            "model.py": b"def unused(): pass\n",
        },
    )
    facts = ProjectFacts.from_files(files)
    assert facts.unreferenced == {str(tmp_path / "model.py"): frozenset({"unused"})}


def test_a_notebooks_function_is_called_only_by_its_own_cells(tmp_path):
    # AnoGan's notebook defines a load_checkpoint it never calls; scripts/utils.py has its
    # own, which scripts/predict.py calls: no call of the notebook's
    files = _tree(
        tmp_path,
        {
            "nb.ipynb": b"import torch\ndef save(d, p):\n    torch.save(d, p)\n"
            b"def load_checkpoint(m, p):\n    m.load_state_dict(torch.load(p))\nsave({}, 'd.pt')\n",
            "utils.py": b"def load_checkpoint(m, p):\n    pass\n",
            "predict.py": b"from utils import load_checkpoint\nload_checkpoint(1, 2)\n",
        },
    )
    facts = ProjectFacts.from_files(files)
    assert facts.unreferenced == {str(tmp_path / "nb.ipynb"): frozenset({"load_checkpoint"})}


def test_only_a_file_of_the_same_program_chooses_the_gpus_elsewhere(tmp_path):
    files = _tree(
        tmp_path,
        {
            "a/train.py": b"import torch\nfrom launch import pick\n",
            "a/launch.py": b"import os\ndef pick(): os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n",
            "b/train_other.py": b"import torch\n",  # another sub-project, another process
        },
    )
    facts = ProjectFacts.from_files(files)
    assert facts.chooses_gpus_elsewhere(str(tmp_path / "a/train.py"))
    assert not facts.chooses_gpus_elsewhere(str(tmp_path / "b/train_other.py"))
    assert not facts.chooses_gpus_elsewhere(str(tmp_path / "a/launch.py"))


def test_a_script_that_only_shares_a_module_with_the_chooser_runs_in_its_own_process(tmp_path):
    # GraphRNN: main.py and main_DeepGMG.py both `from train import *`; each sets
    # CUDA_VISIBLE_DEVICES in its own __main__ block
    files = _tree(
        tmp_path,
        {
            "main.py": b"from train import *\nif __name__ == '__main__':\n    net = Net().cuda()\n",
            "main_other.py": b"import os\nfrom train import *\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n",
            "train.py": b"import torch\nfrom model import *\n",
            "model.py": b"import torch\n",
        },
    )
    facts = ProjectFacts.from_files(files)
    assert not facts.chooses_gpus_elsewhere(str(tmp_path / "main.py"))
    # main_other.py loads these before it sets the variable: a declaration at their top is too early
    assert facts.chooses_gpus_elsewhere(str(tmp_path / "train.py"))
    assert facts.chooses_gpus_elsewhere(str(tmp_path / "model.py"))
    assert not facts.chooses_gpus_elsewhere(str(tmp_path / "main_other.py"))


def test_a_notebook_runs_in_a_kernel_of_its_own(tmp_path):
    # PyTorch-FastCampus: three Grad-CAM notebooks set CUDA_VISIBLE_DEVICES; the other
    # notebooks of the course are not run by their kernels
    files = _tree(
        tmp_path,
        {
            "mnist.ipynb": b"import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n",
            "gradcam.ipynb": b"import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n",
        },
    )
    facts = ProjectFacts.from_files(files)
    assert not facts.chooses_gpus_elsewhere(str(tmp_path / "mnist.ipynb"))


def test_a_model_put_in_eval_mode_is_not_a_dynamic_lookup(tmp_path):
    files = _tree(
        tmp_path,
        {
            "train.py": b"import helpers\nmodel.eval()\nnet.exec(1)\n",
            "helpers.py": b"def dead(): pass\n",
        },
    )
    assert ProjectFacts.from_files(files).unreferenced == {str(tmp_path / "helpers.py"): frozenset({"dead"})}


def test_an_eval_of_a_name_inside_another_module_is_no_lookup_of_the_files_own(tmp_path):
    """CCNet's evaluate.py builds its model with `eval('networks.' + args.model + '.Seg_Model')`:
    only `networks` can be reached that way, so its uncalled `predict_whole` (test.py has its
    own, and calls that) stays dead. A bare `eval(name)` may still reach anything."""
    files = _tree(
        tmp_path,
        {
            "evaluate.py": b"import networks\ndef predict_whole(): pass\n"
            b"def main(model):\n    return eval('networks.' + model + '.Seg_Model')()\nmain('a')\n",
            "test.py": b"def predict_whole(): pass\ndef run(name):\n    return eval(name)\npredict_whole()\n",
            "networks.py": b"x = 1\n",
        },
    )
    assert ProjectFacts.from_files(files).unreferenced == {str(tmp_path / "evaluate.py"): frozenset({"predict_whole"})}


def test_a_class_its_package_only_passes_on_is_built_by_nothing(tmp_path):
    """InsightFace-v2 vendors RetinaFace's `layers/modules/`, whose `__init__.py` re-exports a
    `MultiBoxLoss` (import line and `__all__`) that no script builds: its methods never run.
    A script that imports and builds it through the package keeps it alive."""
    sources = {
        "train.py": b"import torch\nfrom retina.layers.modules import Prior\nPrior().run()\n",
        "retina/__init__.py": b"",
        "retina/layers/__init__.py": b"",
        "retina/layers/modules/__init__.py": b"from .loss import MultiBoxLoss\nfrom .prior import Prior\n"
        b"__all__ = ['MultiBoxLoss', 'Prior']\n",
        "retina/layers/modules/loss.py": b"import torch\nclass MultiBoxLoss(torch.nn.Module):\n"
        b"    def forward(self, x):\n        return x.cuda()\n",
        "retina/layers/modules/prior.py": b"class Prior(object):\n    def run(self):\n        pass\n",
    }
    facts = ProjectFacts.from_files(_tree(tmp_path, sources))
    assert facts.unreferenced == {str(tmp_path / "retina/layers/modules/loss.py"): frozenset({"MultiBoxLoss.forward"})}
    sources["train.py"] += b"from retina.layers.modules import MultiBoxLoss\nloss = MultiBoxLoss()\n"
    assert ProjectFacts.from_files(_tree(tmp_path, sources)).unreferenced == {}


def test_every_method_of_a_class_nothing_builds_is_unreferenced(tmp_path):
    """An old experiment's class that no file names (a comment does not count) never runs,
    `__init__` included. A class another file names, or one a framework may find (its base is
    not the project's), is left alone; so is every class where names are looked up at run time."""
    sources = {
        "main.py": b"import torch\nfrom used import Used\n# FeatureExtractionTest(loader)\nUsed().run()\n",
        "used.py": b"import torch\nclass Used(object):\n    def __init__(self): pass\n    def run(self): pass\n",
        "old.py": b"import torch\nclass FeatureExtractionTest():\n    def __init__(self):\n        self.m = torch.nn.Linear(2, 2).cuda()\n"
        b"    def extract(self, x):\n        return self.m(x.cuda())\nclass Game(gym.Env):\n    def reset(self): pass\n",
    }
    facts = ProjectFacts.from_files(_tree(tmp_path, sources))
    assert facts.unreferenced == {
        str(tmp_path / "old.py"): frozenset({"FeatureExtractionTest.__init__", "FeatureExtractionTest.extract"})
    }
    sources["main.py"] += b"net = models.__dict__[arch]()\n"
    # a name built at run time in a file that cannot import old.py does not reach its class
    assert ProjectFacts.from_files(_tree(tmp_path, sources)).unreferenced == facts.unreferenced
    sources["main.py"] = b"import old as models\n" + sources["main.py"]
    # one that imports it may build it: only what the methods' own names show stays dead
    assert ProjectFacts.from_files(_tree(tmp_path, sources)).unreferenced == {
        str(tmp_path / "old.py"): frozenset({"FeatureExtractionTest.extract"})
    }
    sources["main.py"] = sources["main.py"].replace(b"import old as models\n", b"")
    sources["loader.py"] = b"import importlib\nmodule = importlib.import_module(name)\n"
    # and a module imported by a computed name may be old.py itself
    assert ProjectFacts.from_files(_tree(tmp_path, sources)).unreferenced == {
        str(tmp_path / "old.py"): frozenset({"FeatureExtractionTest.extract"})
    }


def test_a_class_named_like_a_test_is_pytests_only_in_the_files_pytest_collects(tmp_path):
    # ESRGAN's src/test.py keeps a `Tester` nothing builds; tests/test_model.py's `TestModel`
    # is pytest's to build
    sources = {
        "main.py": b"import torch\nfrom src.train import Trainer\nTrainer().train()\n",
        "src/train.py": b"import torch\nclass Trainer:\n    def train(self): pass\n",
        "src/test.py": b"import torch\nclass Tester:\n    def __init__(self): pass\n    def test(self): pass\n",
        "tests/test_model.py": b"import torch\nclass TestModel:\n    def test_forward(self): pass\n",
    }
    facts = ProjectFacts.from_files(_tree(tmp_path, sources))
    assert facts.unreferenced == {str(tmp_path / "src/test.py"): frozenset({"Tester.__init__", "Tester.test"})}


def test_a_file_that_imports_a_gpu_only_package_is_gpu_code_by_design():
    """A CUDA kernel's module (`from cupy.cuda import function`) runs nowhere without a GPU:
    the `.cuda()` of its self-test is its design, not a bug. An import inside a function, or
    of another package, says nothing."""
    from devfix.analysis.extensions import imports_gpu_package
    from devfix.config import Config
    from devfix.engine import process_source

    kernel = (
        b"import torch\nfrom cupy.cuda import function\nfrom pynvrtc.compiler import Program\n\n"
        b"if __name__ == '__main__':\n    x = torch.rand(4).cuda()\n    print(x * 2)\n"
    )
    assert imports_gpu_package(kernel) and imports_gpu_package(b"import cupy as cp\n")
    # mamba.py's comparison with the fused kernels, which import their CUDA extension at once
    assert imports_gpu_package(b"from mamba_ssm import Mamba\n") and imports_gpu_package(b"import flash_attn\n")
    assert not imports_gpu_package(b"def f():\n    import cupy\n") and not imports_gpu_package(b"import cupyx_like\n")
    assert process_source(kernel, Config(), fix=False).diagnostics == []


def test_folders_a_script_puts_on_sys_path_are_searched_after_its_own():
    files = {
        "pose/tools/_init_paths.py": b"import os.path as osp\nimport sys\n"
        b"this_dir = osp.dirname(__file__)\nsys.path.insert(0, osp.join(this_dir, '..', 'lib'))\n",
        "pose/tools/train.py": b"import _init_paths\nimport dataset\nfrom core.loss import Loss\n",
        "pose/other/run.py": b"import dataset\n",
        "pose/scripts/eval.py": b"import sys\nsys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
        b"from lib.core import loss\n",
        "pose/lib/dataset/__init__.py": b"",
        "pose/lib/core/__init__.py": b"",
        "pose/lib/core/loss.py": b"",
    }
    index = ProjectIndex(list(files))
    index.add_search_paths(files.items())
    assert index.resolve("pose/tools/train.py", "dataset", 0) == "pose/lib/dataset/__init__.py"
    assert index.resolve("pose/tools/train.py", "core.loss", 0) == "pose/lib/core/loss.py"
    assert index.resolve("pose/other/run.py", "dataset", 0) is None  # no _init_paths beside it
    assert index.resolve("pose/scripts/eval.py", "lib.core.loss", 0) == "pose/lib/core/loss.py"


def test_importing_a_module_compiled_from_cuda_sources_makes_its_importers_gpu_code():
    files = [
        (
            "lib/nms/setup.py",
            b"ext = [Extension('cpu_nms', ['cpu_nms.pyx']),\n"
            b"       Extension('gpu_nms', ['nms_kernel.cu', 'gpu_nms.pyx'], libraries=['cudart'])]\n",
        ),
        ("lib/nms/nms.py", b"from .cpu_nms import cpu_nms\nfrom .gpu_nms import gpu_nms\n"),
        ("lib/nms/cpu_only.py", b"from .cpu_nms import cpu_nms\n"),
        ("lib/dataset/coco.py", b"from nms.nms import oks_nms\n"),
        ("lib/dataset/plain.py", b"import numpy\n"),
        ("tools/absolute.py", b"from nms.gpu_nms import gpu_nms\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {"lib/nms/nms.py", "lib/dataset/coco.py", "tools/absolute.py"}


def test_a_module_that_calls_a_compiling_function_at_its_top_is_gpu_code():
    """BigVGAN's `activation1d.py`: `anti_alias_activation_cuda = load.load()`, where the run's
    `load.py` hands `.cu` sources to `cpp_extension.load` in a function; its test imports it.
    The compiling module itself only compiles when asked."""
    compiler = (
        b"from torch.utils import cpp_extension\n\n\ndef load():\n"
        b"    return cpp_extension.load(name='act', sources=['act.cpp', 'act_cuda.cu'])\n"
    )
    files = [
        ("kernels/__init__.py", b""),
        ("kernels/cuda/__init__.py", b""),
        ("kernels/cuda/load.py", compiler),
        ("kernels/cuda/activation1d.py", b"import torch\nfrom kernels.cuda import load\n\nact_cuda = load.load()\n"),
        ("kernels/cuda/lazy.py", b"from kernels.cuda import load\n\n\ndef build():\n    return load.load()\n"),
        ("tests/test_activation.py", b"import torch\nfrom kernels.cuda import activation1d\n"),
        # RWKV's demos compile at their top without keeping the module
        ("demo.py", b"from torch.utils.cpp_extension import load\nload(name='k', sources=['k.cu'], verbose=True)\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {"kernels/cuda/activation1d.py", "tests/test_activation.py", "demo.py"}


def test_a_setup_script_that_refuses_to_build_without_cuda_makes_its_extension_gpu_code():
    """Deformable-DETR's `models/ops/setup.py` picks `extension = CUDAExtension` where there is
    a GPU and raises otherwise, then builds through the alias; the op's test imports it."""
    setup = (
        b"from torch.utils.cpp_extension import CUDAExtension, CppExtension\n"
        b"def get_extensions():\n"
        b"    extension = CppExtension\n"
        b"    if torch.cuda.is_available() and CUDA_HOME is not None:\n"
        b"        extension = CUDAExtension\n"
        b"        sources += source_cuda\n"
        b"    else:\n"
        b"        raise NotImplementedError('Cuda is not available')\n"
        b"    return [extension(\n        'MultiScaleDeformableAttention', sources)]\n"
    )
    files = [
        ("models/ops/setup.py", setup),
        (
            "models/ops/functions/ms_deform_attn_func.py",
            b"import torch\nimport MultiScaleDeformableAttention as MSDA\n",
        ),
        ("models/ops/test.py", b"import torch\nfrom functions.ms_deform_attn_func import MSDeformAttnFunction\n"),
        ("main.py", b"import torch\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert "models/ops/functions/ms_deform_attn_func.py" in found and "main.py" not in found


def test_a_built_kernel_whose_fallback_compiles_it_on_import_is_gpu_code_either_way():
    """nerf2mesh's `raymarching.py`: `try: import _raymarching_mob` (what its setup script
    builds) / `except ImportError: from .backend import _backend` (which compiles the same
    `.cu` sources on import). A fallback to CPU code, or none, is a way around the kernel."""
    setup = (
        b"from torch.utils.cpp_extension import CUDAExtension\next = [CUDAExtension(name='_ray', sources=['r.cu'])]\n"
    )
    backend = b"from torch.utils.cpp_extension import load\n_backend = load(name='_ray', sources=['r.cu'])\n"
    files = [
        ("raymarching/setup.py", setup),
        ("raymarching/backend.py", backend),
        (
            "raymarching/raymarching.py",
            b"import torch\n\ntry:\n    import _ray as _backend\nexcept ImportError:\n    from .backend import _backend\n",
        ),
        ("raymarching/__init__.py", b"from .raymarching import *\n"),
        ("nerf/renderer.py", b"import torch\nimport raymarching\n"),
        ("optional.py", b"try:\n    import _ray as _backend\nexcept ImportError:\n    _backend = None\n"),
        (
            "cpu_fallback.py",
            b"try:\n    import _ray as _backend\nexcept ImportError:\n    from cpu_ops import ray as _backend\n",
        ),
        ("cpu_ops.py", b"import torch\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {
        "raymarching/backend.py",
        "raymarching/raymarching.py",
        "raymarching/__init__.py",
        "nerf/renderer.py",
    }


def test_a_module_a_setup_script_installs_by_name_is_imported_by_that_name():
    """imaginaire's FlowNet2 layers: `third_party/correlation/setup.py` builds
    `correlation_cuda` and installs `correlation.py` (`py_modules=['correlation']`), which
    imports the kernels; the network imports it as plain `import correlation`."""
    setup = (
        b"from torch.utils.cpp_extension import CUDAExtension\n"
        b"setup(name='correlation_cuda', py_modules=['correlation'],\n"
        b"      ext_modules=[CUDAExtension('correlation_cuda', ['src/c.cc', 'src/k.cu'])])\n"
    )
    files = [
        ("third_party/correlation/setup.py", setup),
        ("third_party/correlation/correlation.py", b"import torch\nimport correlation_cuda\n"),
        ("flow_net/networks/flownet_c.py", b"import torch\nimport correlation\n"),
        ("flow_net/networks/flownet_s.py", b"import torch\nimport correlations\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {"third_party/correlation/correlation.py", "flow_net/networks/flownet_c.py"}


def test_the_refusal_scan_stays_linear_on_long_blocks():
    """The scan for `if torch.cuda.is_available(): ... else: raise` reads each indented line
    once: a long block that ends without `else` must not make it backtrack (it once did)."""
    from devfix.analysis.extensions import _REFUSES_WITHOUT_CUDA

    text = (b"    if torch.cuda.is_available() and x:\n" + (b" " * 12 + b"y = 1\n") * 400) * 20
    assert _REFUSES_WITHOUT_CUDA.search(text) is None


def test_a_module_that_imports_a_gpu_only_package_makes_its_importers_gpu_code():
    """A QRNN's `forget_mult.py` imports CuPy at its top; `qrnn.py` imports it in the `else:`
    of its `if __name__ == "__main__":`, the branch every import takes; a model that imports
    the package only inside a function (an optional backend) is not GPU code for that."""
    files = [
        ("torchqrnn/forget_mult.py", b"import torch\nfrom cupy.cuda import function\n"),
        (
            "torchqrnn/qrnn.py",
            b"import torch\n\nif __name__ == '__main__':\n    from forget_mult import ForgetMult\n"
            b"else:\n    from .forget_mult import ForgetMult\n",
        ),
        ("torchqrnn/__init__.py", b"from .qrnn import QRNNLayer\n"),
        ("model.py", b"def build(use_qrnn):\n    from torchqrnn import QRNNLayer\n    return QRNNLayer\n"),
        ("main_only.py", b"if __name__ == '__main__':\n    from torchqrnn.forget_mult import ForgetMult\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {"torchqrnn/forget_mult.py", "torchqrnn/qrnn.py", "torchqrnn/__init__.py"}


def test_rapids_data_frames_are_gpu_only_packages():
    """Merlin's serving notebooks read their sessions with cuDF, which keeps its frames in GPU
    memory: a file that imports it needs a GPU; pandas does not."""
    from devfix.analysis.extensions import imports_gpu_package

    assert imports_gpu_package(b"import os\nimport cudf\n")
    assert imports_gpu_package(b"from cuml.cluster import KMeans\n")
    assert not imports_gpu_package(b"import pandas as cudf_like\n")


def test_a_legacy_ffi_build_that_refuses_to_run_without_cuda_makes_a_gpu_only_module():
    """CenterNet's DCNv2 `build.py` raises without CUDA before `create_extension('_ext.dcn_v2',
    ...)`, so `from ._ext import dcn_v2` needs a GPU; faster-rcnn.pytorch's NMS build falls back
    to its C sources (`with_cuda = False`), so importing its `_ext.nms` needs nothing."""
    refuses = (
        b"import torch\nfrom torch.utils.ffi import create_extension\nwith_cuda = False\n"
        b"if torch.cuda.is_available():\n    sources = ['a.c']\n\n    with_cuda = True\n"
        b"else:\n    raise ValueError('CUDA is not available')\n"
        b"ffi = create_extension(\n    '_ext.dcn_v2',\n    sources=sources,\n    with_cuda=with_cuda)\n"
    )
    refuses_first = (
        b"import torch\nfrom torch.utils.ffi import create_extension\n"
        b"if not torch.cuda.is_available():\n    raise RuntimeError('needs CUDA')\n"
        b"ffi = create_extension('_ext.roi', sources=['a.c'], with_cuda=True)\n"
    )
    falls_back = refuses.replace(b"else:\n    raise ValueError('CUDA is not available')\n", b"").replace(
        b"dcn_v2", b"nms"
    )
    files = [
        ("dcn/build.py", refuses),
        ("dcn/dcn_v2_func.py", b"from ._ext import dcn_v2 as _backend\n"),
        ("dcn/dcn_v2.py", b"from .dcn_v2_func import DCNv2Function\n"),
        ("roi/build.py", refuses_first),
        ("roi/functions.py", b"from ._ext import roi\n"),
        ("nms/build.py", falls_back),
        ("nms/nms_wrapper.py", b"from ._ext import nms\n"),
    ]
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {"dcn/dcn_v2_func.py", "dcn/dcn_v2.py", "roi/functions.py"}


def test_a_class_is_read_in_the_files_that_can_import_its_module():
    """Speech-Transformer's src/bin/train.py does `from solver import Solver` with src/solver/
    on its path: the package's `__init__.py` that the folders resolve to may not be what runs,
    so src/solver/solver.py counts as imported. A sub-project's own `common/nets.py` is not
    read by the other sub-project's scripts."""
    from devfix.analysis.unused import visible_from

    files = [
        ("src/bin/train.py", b"from solver import Solver\n"),
        ("src/solver/__init__.py", b""),
        ("src/solver/solver.py", b"class Solver(object):\n    pass\n"),
        ("rl/ddpg.py", b"from common.nets import *\n"),
        ("rl/common/nets.py", b"class Policy: pass\n"),
        ("rl/pomdp/sac.py", b"from common.nets import *\n"),
        ("rl/pomdp/common/nets.py", b"class Policy: pass\n"),
    ]
    index = ProjectIndex([path for path, _ in files])
    seen = visible_from(files, index)
    assert "src/bin/train.py" in seen["src/solver/solver.py"]
    assert seen["rl/common/nets.py"] == {"rl/ddpg.py"}
    assert seen["rl/pomdp/common/nets.py"] == {"rl/pomdp/sac.py"}


def test_a_package_the_run_installs_is_imported_by_name_and_its_cuda_extension_found(tmp_path):
    """pointMLP: pointnet2_ops_lib/setup.py installs `pointnet2_ops`, whose `_ext` it compiles
    with torch's CUDAExtension (sources in a variable), and pointnet2_utils.py imports `_ext`
    in a top-level `try:`. The models import `pointnet2_ops` by name from anywhere; every file
    whose imports reach the extension is GPU code. An import under `if` does not count, nor
    one in a `try:` whose fallback is a CPU path."""
    files = _tree(
        tmp_path,
        {
            "lib/setup.py": b"setup(name='pointnet2_ops', ext_modules=[CUDAExtension(\n"
            b"    name='pointnet2_ops._ext', sources=_ext_sources)])\n",
            "lib/pointnet2_ops/__init__.py": b"",
            "lib/pointnet2_ops/pointnet2_utils.py": b"try:\n    import pointnet2_ops._ext as _ext\n"
            b"except ImportError:\n    from torch.utils.cpp_extension import load\n"
            b"    _ext = load('_ext', sources=glob.glob('src/*.cu'))\n",
            # RAFT's core/corr.py: an optional extension, with a CPU path when it is missing
            "lib/optional.py": b"try:\n    import pointnet2_ops._ext\nexcept ImportError:\n    pass\n",
            "seg/model/__init__.py": b"from .pointmlp import PointMLP\n",
            "seg/model/pointmlp.py": b"from pointnet2_ops import pointnet2_utils\n",
            "seg/main.py": b"import model as models\n",
            "seg/guarded.py": b"import torch\nif torch.cuda.is_available():\n    import pointnet2_ops._ext\n",
        },
    )
    index = ProjectIndex([path for path, _ in files])
    model = str(tmp_path / "seg/model/pointmlp.py")
    assert index.resolve(model, "pointnet2_ops.pointnet2_utils", 0) == str(
        tmp_path / "lib/pointnet2_ops/pointnet2_utils.py"
    )
    found = ProjectFacts.from_files(files).builds_cuda_on_import
    assert found == {
        str(tmp_path / name)
        for name in (
            "lib/pointnet2_ops/pointnet2_utils.py",
            "seg/model/pointmlp.py",
            "seg/model/__init__.py",
            "seg/main.py",
        )
    }


def test_an_unimported_file_of_a_folder_others_import_from_is_a_users_pick(tmp_path):
    """prakashpandey9's Text-Classification: main.py imports models/LSTM.py; models/RCNN.py,
    which nothing imports, is one of the models a user picks by editing that import, so its
    class is no dead code. A class of an imported file that nothing names is."""
    sources = {
        "main.py": b"from models.LSTM import LSTMClassifier\nfrom losses import Used\nLSTMClassifier()\nUsed().run()\n",
        "models/LSTM.py": b"import torch.nn as nn\nclass LSTMClassifier(nn.Module):\n    def forward(self, x):\n        return x\n",
        "models/RCNN.py": b"import torch.nn as nn\nclass RCNN(nn.Module):\n    def forward(self, x):\n"
        b"        return x.cuda()\n",
        "losses.py": b"import torch\nclass Used(object):\n    def run(self): pass\n"
        b"class RankSort(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        b"        return x.cuda()\n",
    }
    facts = ProjectFacts.from_files(_tree(tmp_path, sources))
    assert facts.unreferenced == {str(tmp_path / "losses.py"): frozenset({"RankSort.forward"})}
    # pytorch-wgan's utils/feature_extraction_test.py: a plain class beside imported utilities,
    # mentioned only in a comment, is an old experiment, dead as before
    sources["models/feature_test.py"] = b"class FeatureExtractionTest(object):\n    def run(self): pass\n"
    facts = ProjectFacts.from_files(_tree(tmp_path, sources))
    assert facts.unreferenced[str(tmp_path / "models/feature_test.py")] == frozenset({"FeatureExtractionTest.run"})


def test_a_program_that_forks_workers_queries_cuda_too_early_at_import(tmp_path):
    """pixel2style2pixel: `models/mtcnn.py` hard-codes `device = 'cuda:0'` at its top, and a
    script that imports it forks `multiprocessing` workers that each use a GPU. A declaration
    there would call `torch.cuda.is_available()` at import, after which a forked child cannot
    use CUDA: DEV001 reports it without a fix. A program that spawns its workers, or another
    sub-project, is not concerned."""
    files = _tree(
        tmp_path,
        {
            "a/mtcnn.py": b"import torch\ndevice = 'cuda:0'\nnet = torch.nn.Linear(2, 2).to(device)\n",
            "a/calc_parallel.py": b"import multiprocessing as mp\nfrom mtcnn import net\n"
            b"def work(i): return i\nif __name__ == '__main__':\n    mp.Pool(4).map(work, range(4))\n",
            "b/train.py": b"import torch.multiprocessing as mp\nimport torch\ndef run(rank): pass\n"
            b"mp.spawn(run, nprocs=2)\n",
            "c/other.py": b"import torch\ndevice = 'cuda:0'\nnet = torch.nn.Linear(2, 2).to(device)\n",
        },
    )
    facts = ProjectFacts.from_files(files)
    assert facts.fork_files == {str(tmp_path / "a/calc_parallel.py")}
    assert facts.queries_cuda_too_early_at_import(str(tmp_path / "a/mtcnn.py"))
    assert facts.queries_cuda_too_early_at_import(str(tmp_path / "a/calc_parallel.py"))
    assert not facts.queries_cuda_too_early_at_import(str(tmp_path / "b/train.py"))
    assert not facts.queries_cuda_too_early_at_import(str(tmp_path / "c/other.py"))
    results = process_project([FileResult(path, data, data) for path, data in files], Config(), fix=True)
    by_path = {result.path: result for result in results}
    (mtcnn,) = by_path[str(tmp_path / "a/mtcnn.py")].diagnostics
    assert (mtcnn.code, mtcnn.status) == ("DEV001", "no-fix")
    assert [(d.code, d.status) for d in by_path[str(tmp_path / "c/other.py")].diagnostics] == [("DEV001", "fixed")]

"""The device-flow analysis (devfix/analysis/): where values live, what meets what, the plan.

Fixtures show what comes out of whole programs; these tests pin the facts the rules read,
for the shapes real training code takes, and the cases where devfix must know nothing.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.facts import FileFacts
from devfix.analysis.values import Kind, Place
from devfix.config import Config
from devfix.engine import fix_code

HEADER = """import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,))), batch_size=4, pin_memory=True)
"""


def facts_of(code: str) -> FileFacts:
    return FileFacts(cst.parse_module(code))


def bound(facts: FileFacts, name: str):
    """The last value bound to `name` anywhere in the file."""
    found = [value for (_, key), value in facts.program.bound.items() if key == name]
    return found[-1]


def moved_names(facts: FileFacts, rule: str = "DEV004"):
    return sorted(move.origin.name for move in facts.plan.by_rule(rule))


def test_batches_are_cpu_tensors_named_where_the_loop_binds_them():
    facts = facts_of(
        HEADER + "for x, y, ids in loader:\n    loss = criterion(model(x), y)\n    print(np.asarray(ids))\n"
    )
    x = bound(facts, "x")
    assert x.kind is Kind.TENSOR and x.place is Place.CPU
    [origin] = x.origins
    assert origin.kind == "batch" and origin.name == "x" and isinstance(origin.binder, cst.For)
    assert moved_names(facts) == ["x", "y"]  # `ids` only goes to NumPy: it stays


def test_moved_batches_are_on_the_device_and_nothing_is_planned():
    facts = facts_of(
        HEADER + "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n    loss = criterion(model(x), y)\n"
    )
    assert bound(facts, "x").place is Place.DEVICE
    assert facts.plan.moves == {}


def test_a_dtype_cast_is_not_a_move():
    facts = facts_of(HEADER + "for x, y in loader:\n    x = x.to(torch.float32)\n    loss = criterion(model(x), y)\n")
    assert moved_names(facts) == ["x", "y"]


def test_the_type_idiom_with_a_cuda_tensor_type_moves_the_batch():
    code = (
        "import torch\nfrom torch import nn\ncuda = torch.cuda.is_available()\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
        "net = nn.Linear(4, 4)\nif cuda:\n    net.cuda()\n"
        "loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4)), batch_size=2)\n"
        "for (imgs,) in loader:\n    real = imgs.type(Tensor)\n    print(net(real))\n"
    )
    facts = facts_of(code)
    assert bound(facts, "real").place is Place.DEVICE
    assert fix_code(code) == (code, [])


def test_a_program_that_only_mentions_a_device_places_nothing():
    code = (
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.proj = nn.Linear(8, 8)\n        self.pos = nn.Parameter(torch.zeros(1, 8))\n\n    def forward(self, x):\n"
        "        return self.proj(x) + self.pos.to(x.device)\n\nif __name__ == '__main__':\n    net = Net()\n"
        "    assert net(torch.randn(2, 8)).shape == (2, 8)\n"
    )
    assert fix_code(code) == (code, [])


def test_a_model_from_elsewhere_is_unknown_and_never_edited():
    code = (
        "import torch\nfrom mylib import load_model\n\nmodel = load_model()\nscale = torch.ones(1, device='cpu')\n"
        "for x in torch.utils.data.DataLoader(range(4)):\n    print(model(x) * scale)\n"
    )
    facts = facts_of(code)
    assert bound(facts, "model").place is Place.UNKNOWN
    assert fix_code(code) == (code, [])


def test_a_helper_reuses_the_module_level_device_the_model_needs():
    code = (
        "import torch\nfrom torch import nn\n\nmodel = nn.Linear(2, 2).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=1)\n\n\n"
        "def run(loader):\n    for x, y in loader:\n        print(model(x))\n"
    )
    new, _ = fix_code(code)
    assert "        x = x.to(device)\n" in new  # `loader` is a loader by its name (spec DEV004)
    assert new.count("device = ") == 1 and "nn.Linear(2, 2).to(device)" in new


def test_a_discarded_move_on_a_global_inside_a_function_is_not_rewritten():
    code = HEADER + "x = torch.ones(4)\n\n\ndef f():\n    x.to(device)\n    return model(x)\n"
    new, diagnostics = fix_code(code)
    assert [d for d in diagnostics if d.code == "DEV011"] == []
    assert "x = torch.ones(4, device=device)" in new  # the global meets the model: made on the device


def test_next_over_iter_of_a_loader_yields_batches():
    facts = facts_of(
        HEADER + "it = iter(loader)\nfor step in range(2):\n    x, y = next(it)\n    loss = criterion(model(x), y)\n"
    )
    assert moved_names(facts) == ["x", "y"]
    assert all(isinstance(move.origin.binder, cst.Assign) for move in facts.plan.by_rule("DEV004"))


def test_a_tensor_needed_on_the_device_and_by_numpy_is_reported_without_fix():
    code = HEADER + "for x, y in loader:\n    loss = criterion(model(x), y)\n    print(np.mean(y))\n"
    new, diagnostics = fix_code(code)
    assert new == code
    [finding] = [d for d in diagnostics if d.code == "DEV004"]
    assert finding.status == "no-fix" and "numpy.mean" in finding.message


def test_a_model_moved_after_a_condition_that_may_not_hold_is_unknown():
    code = "import sys\nimport torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nif len(sys.argv) > 1:\n    model.cuda()\nprint(model(torch.ones(1, 2)))\n"
    facts = facts_of(code)
    assert bound(facts, "model").place is Place.CPU  # the binding; its place after the `if` is the heap's
    assert facts.plan.moves == {}


def test_moving_a_model_moves_the_other_inputs_it_meets():
    """Components: the model meets a moved batch, so it moves; it also meets a CPU tensor in
    a consistent CPU call elsewhere, which must move with it (or the fix breaks that call)."""
    code = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(2, 2)\nprobe = torch.ones(1, 2)\nprint(model(probe))\nprint(model(torch.ones(1, 2).to(device)))\n"
    )
    new, _ = fix_code(code)
    assert "model = nn.Linear(2, 2).to(device)" in new
    assert "probe = torch.ones(1, 2, device=device)" in new


def test_a_conflicting_meeting_counts_as_on_the_device_so_one_run_finds_every_operand():
    # `w * mask` is fixed by moving `mask`; `bias + ...` then meets a device tensor too. Were the
    # conflict's result unknown, `bias` would only be found by a second run (not idempotent).
    code = HEADER + (
        "x = torch.randn(2, 4).to(device)\n"
        "mask = torch.ones(2, 2)\n"
        "bias = torch.zeros(2, 2)\n"
        "out = bias + model(x) * mask\n"
    )
    facts = facts_of(code)
    assert bound(facts, "out").place is Place.DEVICE
    new, diagnostics = fix_code(code)
    assert [(d.code, d.line) for d in diagnostics if d.status == "fixed"] == [("DEV008", 11), ("DEV008", 12)]
    assert "mask = torch.ones(2, 2, device=device)" in new and "bias = torch.zeros(2, 2, device=device)" in new
    assert fix_code(new)[0] == new


def test_no_second_device_is_declared_above_the_one_a_function_chooses_itself():
    """Dual-Path-RNN's `Separation.__init__` moves the net with `.cuda()` and then sets
    `self.device` from its `-gpuid` option: a `device` declared at its top would disagree with
    the author's, which does not exist yet at the `.cuda()`. Reported, not fixed."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass Separation:\n"
        "    def __init__(self, gpuid):\n"
        "        self.net = nn.Linear(2, 2).cuda()\n"
        "        self.device = torch.device('cuda:{}'.format(gpuid[0]) if len(gpuid) > 0 else 'cpu')\n\n"
        "    def run(self, x):\n        return self.net(x.to(self.device))\n\n\n"
        "if __name__ == '__main__':\n    print(Separation([0]).run(torch.ones(1, 2)))\n"
    )
    new, diagnostics = fix_code(source, Config())
    assert new == source
    assert [(d.code, d.status) for d in diagnostics] == [("DEV002", "no-fix")]


def test_a_flag_named_for_not_using_the_gpu_is_false_where_there_is_one():
    """`--unuse_cuda` (torch-light), `--no-cuda`, `--disable_gpu`: the user's "stay on the CPU",
    not given where a GPU is meant to be used (as `--no-cuda` is read), given where there is
    none. Read as a "use the GPU" switch, `not args.unuse_cuda` made the program's GPU code dead."""
    code = (
        "import argparse\nimport torch\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--unuse_cuda', action='store_true')\nargs = parser.parse_args()\n"
        "use_cuda = torch.cuda.is_available() and not args.unuse_cuda\n"
    )
    use_cuda = bound(facts_of(code), "use_cuda")
    assert (use_cuda.truth, use_cuda.cpu, use_cuda.flag) == (True, False, "choice")


def test_a_bool_typed_option_with_a_true_default_is_always_true():
    """`add_argument('--gpu_mode', type=bool, default=True)` (GAN collections): argparse calls
    `bool` on the text given, so `--gpu_mode False` is true too; only a flag is the user's choice."""
    template = (
        "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--gpu_mode', {})\nargs = parser.parse_args()\ngpu_mode = args.gpu_mode\n"
    )
    cases = {
        "type=bool, default=True": (True, True, "fixed"),
        "type=bool, default='yes'": (True, True, "fixed"),
        "type=bool, default=False": (True, False, "choice"),
        "action='store_true'": (True, False, "choice"),
    }
    for arguments, expected in cases.items():
        gpu_mode = bound(facts_of(template.format(arguments)), "gpu_mode")
        assert (gpu_mode.truth, gpu_mode.cpu, gpu_mode.flag) == expected, arguments


def test_a_function_that_returns_its_parameter_hands_back_what_each_call_passes():
    """`return check_args(parser.parse_args())`: the options keep their values through a check
    that returns its parameter; a function that rebinds it, or returns something else too, does not."""
    code = (
        "import argparse\n"
        "def check_args(args):\n    assert args.epoch >= 1\n    return args\n"
        "def rebinds(args):\n    args = None\n    return args\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--cuda', action='store_true')\n"
        "parser.add_argument('--epoch', type=int, default=1)\n"
        "checked = check_args(parser.parse_args()).cuda\nlost = rebinds(parser.parse_args())\n"
    )
    facts = facts_of(code)
    checked = bound(facts, "checked")
    assert (checked.truth, checked.cpu, checked.flag) == (True, False, "choice")
    assert bound(facts, "lost").attrs == ()


def test_only_names_that_negate_the_accelerator_are_negative_flags():
    from devfix.analysis.torch_api import is_negative_flag

    negative = ["no_cuda", "nocuda", "unuse_cuda", "not_use_gpu", "disable_gpus", "cpu_only", "use_cpu", "cpu"]
    positive = ["use_cuda", "cuda", "gpu_ids", "with_gpu", "enable_cuda", "num_gpus", "gnu_cuda"]
    assert [name for name in negative if not is_negative_flag(name)] == []
    assert [name for name in positive if is_negative_flag(name)] == []


def test_no_device_is_declared_in_a_class_that_switches_the_gpu_itself():
    """A GAN class (manifold_mixup's, with its switch renamed) moves its networks under
    `if self.use_cuda:` but makes one tensor with a bare `.cuda()`. A cuda-if-available device declared there would disagree with the
    switch turned off on a GPU machine: the line is reported, not fixed."""
    source = (
        "import torch\nfrom torch import nn\n\n\nclass GAN:\n"
        "    def __init__(self, use_cuda):\n        self.use_cuda = use_cuda\n        self.D = nn.Linear(2, 1)\n"
        "        if self.use_cuda:\n            self.D.cuda()\n\n"
        "    def step(self, x):\n        out = self.D(x)\n"
        "        return torch.autograd.grad(out, x, grad_outputs=torch.ones(out.size()).cuda())\n"
    )
    new, diagnostics = fix_code(source, Config())
    assert new == source
    assert [(d.code, d.status) for d in diagnostics] == [("DEV002", "no-fix")]


def test_no_second_device_is_declared_beside_a_device_option_devfix_cannot_reach():
    """semisup-adv keeps `--device` in a configuration dictionary that its train function
    reads (`torch.device(run_config['device'])`), and moves the model in `main` with a bare
    `.cuda()`. A cuda-if-available device declared there would ignore `--device cpu` on a GPU
    machine, and the batches would follow the option while the model did not: reported, not
    fixed."""
    source = (
        "import argparse\n\nimport torch\nfrom torch import nn\n\n\n"
        "def parse_args():\n    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--device', type=str, default='cuda')\n"
        "    args = parser.parse_args()\n    return {'run_config': {'device': args.device}}\n\n\n"
        "def train(model, criterion, loader, run_config):\n"
        "    device = torch.device(run_config['device'])\n"
        "    for data, targets in loader:\n        data, targets = data.to(device), targets.to(device)\n"
        "        criterion(model(data), targets).backward()\n\n\n"
        "def main():\n    run_config = parse_args()['run_config']\n"
        "    model = torch.nn.DataParallel(nn.Linear(6, 3).cuda())\n"
        "    criterion = nn.CrossEntropyLoss(weight=torch.Tensor([1.0, 1.0, 0.1])).cuda()\n"
        "    train(model, criterion, [(torch.randn(4, 6), torch.randint(0, 3, (4,)))], run_config)\n\n\n"
        "main()\n"
    )
    new, diagnostics = fix_code(source, Config())
    assert new == source
    assert [(d.line, d.code, d.status) for d in diagnostics] == [(23, "DEV002", "no-fix"), (24, "DEV002", "no-fix")]


def test_a_gpu_other_than_the_devices_by_number_is_reported_not_rewritten():
    """stat453's GAN notebook trains on `torch.device("cuda:2" if ... else "cpu")`, then puts
    the model on "cuda:0" for torchsummary, which makes its inputs on the current GPU: `device`
    there would move the model away from them. The same GPU written out is still rewritten."""
    source = (
        "import torch\nfrom torch import nn\n\n"
        "device = torch.device('cuda:2' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nout = model(torch.ones(1, 4).to(device))\n"
        "model = model.to('cuda:0')\nx = torch.zeros(3, device='cuda:2')\n"
    )
    new, diagnostics = fix_code(source, Config())
    assert [(d.line, d.code, d.status) for d in diagnostics] == [(7, "DEV002", "no-fix"), (8, "DEV002", "fixed")]
    assert "model.to('cuda:0')" in new and "torch.zeros(3, device=device)" in new


def test_code_run_under_a_framework_asked_for_the_gpu_accelerator_is_gpu_code():
    """co-tracker trains in a `LightningLite` subclass started with `accelerator="gpu"`:
    Lightning refuses to start without a GPU, so the `.cuda()` in its `run` is the program's
    design. Started with `accelerator="auto"`, the same code is a bug on a CPU-only machine."""
    source = (
        "import torch\nfrom torch import nn\nfrom pytorch_lightning.lite import LightningLite\n\n\n"
        "class Lite(LightningLite):\n    def run(self, steps):\n        model = nn.Linear(2, 2)\n"
        "        model.cuda()\n        return model(torch.ones(1, 2).cuda())\n\n\n"
        "if __name__ == '__main__':\n    Lite(devices='auto', accelerator='gpu').run(3)\n"
    )
    new, diagnostics = fix_code(source, Config())
    assert new == source and diagnostics == []
    auto = source.replace("accelerator='gpu'", "accelerator='auto'")
    assert [d.code for d in fix_code(auto, Config())[1]] == ["DEV001", "DEV002", "DEV002"]


def test_an_object_built_with_its_gpu_default_asks_for_the_gpu_and_one_told_otherwise_does_not():
    """`PNet()` whose constructor moves its network under `use_gpu=True`, and a text encoder
    that keeps `device="cuda"` for the moves of its `forward`: built with their defaults, they
    need a GPU, so the rest of the function's `.cuda()` is the program's design. Built with
    `use_gpu=False` or `device="cpu"`, the same `.cuda()` is a bug on a CPU-only machine."""
    source = (
        "import torch\nfrom torch import nn\n\n\n"
        "class PNet(nn.Module):\n    def __init__(self, use_gpu=True):\n        super().__init__()\n"
        "        self.net = nn.Linear(2, 2)\n        if use_gpu:\n            self.net.cuda()\n\n\n"
        "class Encoder(nn.Module):\n    def __init__(self, device='cuda'):\n        super().__init__()\n"
        "        self.embed = nn.Embedding(9, 2)\n        self.device = device\n\n"
        "    def forward(self, ids):\n        return self.embed(torch.tensor(ids).to(self.device))\n\n\n"
        "def score():\n    net = PNet()\n    return net.net(torch.ones(1, 2).cuda())\n\n\n"
        "def encode():\n    encoder = Encoder().cuda()\n    return encoder([1, 2])\n"
    )
    new, diagnostics = fix_code(source, Config())
    assert new == source and diagnostics == []
    told = source.replace("PNet()", "PNet(use_gpu=False)").replace("Encoder()", "Encoder(device='cpu')")
    assert [(d.line, d.code) for d in fix_code(told, Config())[1]] == [
        (25, "DEV001"), (25, "DEV002"), (29, "DEV001"), (29, "DEV002")
    ]  # fmt: skip


def test_only_a_lightning_module_has_its_layers_placed_by_a_framework():
    """A worker process (`torch.multiprocessing.Process`) is a framework's class too, but no
    trainer moves it: its CPU network fed device inputs is still DEV003's. And a module's
    `DEVICE = torch.device("cuda:0")` that a helper moves tensors to is still DEV001's, though
    the helper's call then asks for that GPU (ASTGCN's training script)."""
    source = (
        "import torch\nimport torch.multiprocessing as mp\nfrom torch import nn\n\n\n"
        "class Worker(mp.Process):\n    def __init__(self):\n        super().__init__()\n"
        "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "        self.local_network = nn.Linear(4, 2)\n\n"
        "    def run(self):\n        state = torch.randn(4).to(self.device)\n"
        "        return self.local_network(state)\n\n\n"
        "def helper(x, device):\n    return x.to(device)\n\n\n"
        "DEVICE = torch.device('cuda:0')\ncriterion = nn.MSELoss().to(DEVICE)\n"
        "print(helper(torch.ones(2), DEVICE), criterion)\n"
    )
    assert [(d.line, d.code) for d in fix_code(source, Config())[1]] == [(10, "DEV003"), (21, "DEV001")]


def test_a_join_keeps_the_options_both_paths_know_and_a_fingerprint_ignores_syntax():
    """Every call of a helper passes the run's options (`prepare_input(t, args=self.args)`):
    joined, the namespace keeps what the calls agree on (`args.cuda` always true), so the
    helper is analysed with it. Two analyses of the same calls make new values, equal in all
    that the callee can learn: their fingerprints are equal, so no third analysis is made."""
    from devfix.analysis.linking import fingerprint
    from devfix.analysis.values import Value, condition, join

    fixed = condition(True, True, "fixed")
    first = Value(Kind.OTHER, Place.UNKNOWN, attrs=(("cuda", fixed), ("lr", Value(Kind.HOST, Place.CPU))))
    second = Value(Kind.OTHER, Place.UNKNOWN, attrs=(("cuda", condition(True, True, "fixed")),), ref=cst.Name("args"))
    joined = join(first, second)
    assert [(name, v.truth, v.flag) for name, v in joined.attrs] == [("cuda", True, "fixed")]
    assert join(first, Value(Kind.OTHER, Place.UNKNOWN)).attrs == ()
    again = Value(Kind.OTHER, Place.UNKNOWN, attrs=(("cuda", condition(True, True, "fixed")),), ref=cst.Name("args"))
    assert fingerprint({"prepare_input": {"args": second}}) == fingerprint({"prepare_input": {"args": again}})
    assert fingerprint({"prepare_input": {"args": second}}) != fingerprint({"prepare_input": {"args": first}})

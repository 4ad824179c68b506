"""Behaviour of DEV007-DEV013 that fixtures alone cannot show."""

from __future__ import annotations

from pathlib import Path

from devfix.config import Config
from devfix.engine import fix_code

FIXTURES = Path(__file__).parent / "fixtures"


def test_dev013_is_only_reported_without_unsafe_fixes():
    source = (FIXTURES / "DEV013" / "list_comprehension_of_layers.py").read_text()
    new, diagnostics = fix_code(source, Config())
    assert new == source
    [finding] = [d for d in diagnostics if d.code == "DEV013"]
    assert finding.status == "unsafe-fix"
    assert "optimizer trains" in finding.message and "state_dict()" in finding.message


def test_dev013_unsupported_use_is_reported_without_fix():
    source = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.layers = [nn.Linear(2, 2), nn.ReLU()]\n\n    def forward(self, x):\n"
        "        for layer in self.layers + [nn.Identity()]:\n            x = layer(x)\n        return x\n"
    )
    new, diagnostics = fix_code(source, Config(unsafe_fixes=True))
    assert new == source
    assert [d.status for d in diagnostics if d.code == "DEV013"] == ["no-fix"]


def test_dev007_needs_evidence_that_the_tensor_meets_the_module():
    """A module without weights that makes noise: nothing shows its result meets a tensor on
    another device, so nothing is reported (spec principle 8)."""
    source = (
        "import torch\nfrom torch import nn\n\nclass Noise(nn.Module):\n    def sample(self, n):\n"
        "        return torch.randn(n)\n"
    )
    assert fix_code(source) == (source, [])


def test_dev012_before_super_init_is_left_alone():
    source = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        self.w = torch.ones(2)\n        super().__init__()\n\n    def forward(self, x):\n        return x * self.w\n"
    )
    new, diagnostics = fix_code(source)
    assert new == source
    assert [d for d in diagnostics if d.code == "DEV012"] == []


def test_dev007_helper_whose_callers_move_the_result_is_left_alone():
    # word_language_model's TransformerModel: the mask helper's result is moved by forward.
    source = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n\n    def _mask(self, sz):\n        return torch.log(torch.tril(torch.ones(sz, sz)))\n\n"
        "    def forward(self, src):\n        mask = self._mask(len(src)).to(src.device)\n        return self.fc(src) + mask.sum()\n"
    )
    new, diagnostics = fix_code(source)
    assert new == source and diagnostics == []


def test_dev009_dtype_conversion_is_not_a_move():
    # pytorch/examples cpp/dcgan/display_samples.py: `.cpu()...to(torch.uint8)` then `.numpy()`.
    source = (
        "import torch\nimages = torch.rand(4, 784)\n"
        "image = images[0].detach().cpu().reshape(28, 28).mul(255).to(torch.uint8)\narray = image.numpy()\n"
    )
    new, diagnostics = fix_code(source)
    assert new == source and [d for d in diagnostics if d.code == "DEV009"] == []


def test_dev009_indices_of_max_do_not_require_grad():
    source = (
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(3, 2).to(device)\nout = model(torch.ones(2, 3).to(device))\n"
        "_, pred = torch.max(out, 1)\nprint(pred.cpu().numpy(), torch.max(out, 1)[1].cpu().numpy(), out.topk(1)[1].cpu().numpy())\n"
    )
    new, diagnostics = fix_code(source)
    assert new == source and diagnostics == []


def test_dev009_expression_passed_to_numpy_is_reported_without_fix():
    source = (
        "import numpy as np\nimport torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(3, 2).to(device)\nprint(np.mean(model(torch.ones(2, 3).to(device))))\n"
    )
    new, diagnostics = fix_code(source)
    assert new == source
    assert [d.status for d in diagnostics if d.code == "DEV009"] == ["no-fix"]


def test_dev007_a_legacy_constructor_of_a_tensor_is_reported_without_a_move():
    """torch-rechub's SASRec: `torch.BoolTensor(x == 0)` of a batch its trainer moves raises on
    a GPU by itself; appending a move to it fixes nothing. Host data is still moved as made."""
    source = (
        "import numpy as np\nimport torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.emb = nn.Embedding(10, 4)\n\n"
        "    def forward(self, x_dict):\n        x = x_dict['seq']\n"
        "        positions = np.tile(np.arange(x.shape[1]), [x.shape[0], 1])\n"
        "        h = self.emb(x) + self.emb(torch.LongTensor(positions))\n"
        "        mask = torch.BoolTensor(x == 0)\n        return h * ~mask.unsqueeze(-1)\n"
    )
    new, diagnostics = fix_code(source)
    assert [(d.line, d.status) for d in diagnostics if d.code == "DEV007"] == [(14, "fixed"), (15, "no-fix")]
    assert "torch.BoolTensor(x == 0)\n" in new and "torch.LongTensor(positions).to(" in new


def test_dev009_an_item_picked_by_position_is_reported_without_a_fix():
    """MORAN's demo: `demo = output[1]` of a model whose forward returns `(preds, image)` in
    debug mode, the image a NumPy array; `.detach()` on it raised AttributeError."""
    source = (
        "import numpy as np\nimport torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n"
        "    def forward(self, x, debug=False):\n        y = self.fc(x)\n        if debug:\n"
        "            return y, np.zeros(3)\n        return y\n\n\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = M().to(device)\n"
        "output = model(torch.ones(1, 2).to(device), debug=True)\ndemo = output[1]\nprint(np.mean(demo))\n"
    )
    new, diagnostics = fix_code(source)
    assert new == source
    assert [d.status for d in diagnostics if d.code == "DEV009"] == ["no-fix"]


def test_dev007_never_takes_the_device_of_a_parameter_annotated_as_no_tensor():
    """neuralop's loss aggregators: `losses: Dict[str, torch.Tensor]` may meet the module's
    buffers through its items, but a dictionary has no `.device` (a breaking edit): only
    parameters with no annotation or a tensor's are devices to take."""
    import libcst as cst

    from devfix.analysis.devices import _annotated_no_tensor

    function = cst.parse_statement(
        "def forward(self, a: Dict[str, torch.Tensor], b: list, c: torch.Tensor, d, e: Optional[torch.Tensor]): pass"
    )
    assert isinstance(function, cst.FunctionDef)
    verdicts = {p.name.value: _annotated_no_tensor(p) for p in function.params.params}
    assert verdicts == {"self": False, "a": True, "b": True, "c": False, "d": False, "e": False}


def test_dev007_never_takes_the_device_of_a_parameter_that_defaults_to_a_constant():
    """TextGAN's `forward_leakgan(..., no_log=False)`: `device=no_log.device` raised
    AttributeError on every call. A number, a string or a bool default is a flag's; `None`
    may stand for an optional tensor."""
    import libcst as cst

    from devfix.analysis.tree import defaults_to_a_constant

    function = cst.parse_statement("def f(self, x, no_log=False, t=-1.0, mode='a', n=3, mask=None, h=init): pass")
    assert isinstance(function, cst.FunctionDef)
    verdicts = {p.name.value: defaults_to_a_constant(p) for p in function.params.params}
    assert verdicts == {
        "self": False,
        "x": False,
        "no_log": True,
        "t": True,
        "mode": True,
        "n": True,
        "mask": False,
        "h": False,
    }


MASKED = (
    "import torch\nfrom torch import nn\n\n\nclass Encoder(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\n    def forward(self, n: int):\n"
    "        mask = torch.ones(n, 4)\n        return self.fc.weight[:n] * mask\n\n\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nmodel = Encoder().to(device)\n"
    "print(model(2))\n"
)


def test_dev007_writes_no_next_where_another_file_scripts_the_module(tmp_path):
    """FastSpeech2's export script runs `torch.jit.script(model)` on the model whose
    `_source_mask` made a CPU mask: TorchScript has no `next()`, so `.device` of
    `next(self.parameters())` would break the export. Without a tensor to take the device
    from, the finding is reported without a fix there; elsewhere it is fixed."""
    from devfix.results import FileResult
    from devfix.runner import process_project

    (tmp_path / "model.py").write_text(MASKED)
    export = "import torch\nfrom model import Encoder\n\ntorch.jit.script(Encoder()).save('encoder.pt')\n"

    def statuses() -> list[str]:
        reads = [FileResult(str(p), p.read_bytes(), p.read_bytes()) for p in sorted(tmp_path.glob("*.py"))]
        return [
            d.status for r in process_project(reads, Config(), fix=False) for d in r.diagnostics if d.code == "DEV007"
        ]

    assert statuses() == ["fixable"]
    (tmp_path / "export.py").write_text(export)
    assert statuses() == ["no-fix"]


def test_dev003_a_new_head_run_before_its_model_is_moved_is_still_moved_where_it_is_built():
    """The holder's later move places the new head only if nothing runs it before (EasyOCR's
    fine-tuning moves the model right after initialising the head; here a forward comes first)."""
    source = (
        "import torch\nimport torch.nn as nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 2)).to(device)\n"
        "model.head = nn.Linear(2, 3)\n"
        "print(model.head(model(torch.randn(1, 4).to(device))))\n"
        "model = model.to(device)\n"
    )
    new, diagnostics = fix_code(source)
    assert [d.code for d in diagnostics] == ["DEV003"]
    assert "model.head = nn.Linear(2, 3).to(device)" in new

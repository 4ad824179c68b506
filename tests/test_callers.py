"""What every caller in the run passes a script's functions (callers.py), and the branches a
default nobody overrides leaves dead."""

from __future__ import annotations

from project_runs import project_findings

from devfix.analysis.callers import kept_defaults, passed_arguments


def test_calls_are_read_for_positional_and_keyword_arguments():
    files = [
        ("a.py", b"def show(self, epoch, fix=True): pass\nshow(1)\ng.show(f(1, 2), [3, 4])\n"),
        ("b.py", b"x.show(2, tag='a,b')  # show(1, 2, 3) in a comment\n"),
    ]
    assert passed_arguments(files, frozenset({b"show"})) == {b"show": (2, frozenset({"tag"}))}


def test_any_use_that_is_not_a_plain_call_makes_the_callers_unknown():
    for use in (b"callback = obj.show\n", b"show(*args)\n", b"show(**options)\n", b"print('show')\n"):
        assert passed_arguments([("a.py", b"def show(fix=True): pass\n" + use)], frozenset({b"show"})) == {}


def test_a_default_is_kept_only_past_every_positional_and_keyword_argument():
    spec = [("epoch", True, None), ("fix", True, True), ("tag", True, False), ("cuda", False, True)]
    assert kept_defaults(spec, (1, frozenset())) == {"fix": True, "tag": False, "cuda": True}
    assert kept_defaults(spec, (2, frozenset({"cuda"}))) == {"tag": False}
    assert kept_defaults(spec, None) == {}


GAN = """import torch
import torch.nn as nn


class GAN(object):
    def __init__(self):
        self.gpu_mode = torch.cuda.is_available()
        self.G = nn.Linear(4, 4)
        if self.gpu_mode:
            self.G.cuda()
        self.sample_z = torch.rand(8, 4)
        if self.gpu_mode:
            self.sample_z = self.sample_z.cuda()

    def visualize_results(self, epoch, fix=True):
        if fix:
            samples = self.G(self.sample_z)
        else:
            z = torch.rand(8, 4).cuda()
            samples = self.G(z)
        print(epoch, samples.shape)
"""


def test_a_branch_no_caller_takes_is_not_rewritten(tmp_path):
    main = "import torch\nfrom gan import GAN\n\ngan = GAN()\ngan.visualize_results(1)\n"
    assert project_findings(tmp_path, {"gan.py": GAN, "main.py": main}) == []


def test_a_caller_that_passes_the_flag_keeps_the_branch(tmp_path):
    main = (
        "import torch\nfrom gan import GAN\n\ngan = GAN()\ngan.visualize_results(1)\n"
        "gan.visualize_results(2, fix=False)\n"
    )
    found = project_findings(tmp_path, {"gan.py": GAN, "main.py": main})
    assert "gan.py:19 DEV002" in found


LOSS = """import torch
import torch.nn as nn


class SegmentationLosses(object):
    def __init__(self, cuda=False):
        self.cuda = cuda

    def cross_entropy(self, logit, target):
        criterion = nn.CrossEntropyLoss(weight=torch.ones(logit.size(1)))
        if self.cuda:
            criterion = criterion.cuda()
        return criterion(logit, target.long())


if __name__ == "__main__":
    loss = SegmentationLosses(cuda=True)
    a = torch.rand(1, 3, 7, 7).cuda()
    b = torch.rand(1, 7, 7).cuda()
    print(loss.cross_entropy(a, b).item())
"""


def test_a_flag_a_self_test_sets_is_still_the_choice_of_other_callers(tmp_path):
    """The self-test passes `cuda=True`; the training script passes its `--cuda` option. The
    guarded `.cuda()` is the callers' choice; the self-test's own `.cuda()` calls are bugs
    (modelled on a public DeepLab's losses)."""
    train = (
        "import argparse\nimport torch\nfrom loss import SegmentationLosses\n\n"
        "parser = argparse.ArgumentParser()\nparser.add_argument('--cuda', action='store_true')\n"
        "args = parser.parse_args()\ncriterion = SegmentationLosses(cuda=args.cuda)\n"
    )
    found = project_findings(tmp_path, {"loss.py": LOSS, "train.py": train})
    assert found == ["loss.py:18 DEV001", "loss.py:18 DEV002", "loss.py:19 DEV002"]
    # alone, the self-test is the only caller: `cuda=True` is a constant, and the guard always holds
    (tmp_path / "train.py").unlink()
    assert "loss.py:12 DEV002" in project_findings(tmp_path, {})

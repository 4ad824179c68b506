"""Offline stand-ins for torchvision's downloadable datasets, for eval/run_changed.py.

The evaluated scripts mostly train on MNIST or CIFAR, which this machine cannot download.
With this folder on PYTHONPATH, `torchvision.datasets.MNIST(...)` and its kin return small
random datasets of the real shapes (and the real attribute names, old ones included), so
a script runs far enough to show whether devfix's edits broke it. The patch is applied when
`torchvision.datasets` is first imported: nothing is imported ahead of the script.
"""

import importlib.abc
import importlib.util
import sys

SHAPES = {  # name: (height, width, channels, classes, data stored as a tensor)
    "MNIST": (28, 28, 1, 10, True),
    "FashionMNIST": (28, 28, 1, 10, True),
    "KMNIST": (28, 28, 1, 10, True),
    "EMNIST": (28, 28, 1, 26, True),
    "QMNIST": (28, 28, 1, 10, True),
    "CIFAR10": (32, 32, 3, 10, False),
    "CIFAR100": (32, 32, 3, 100, False),
    "SVHN": (32, 32, 3, 10, False),
    "STL10": (96, 96, 3, 10, False),
}
TRAIN, TEST = 512, 128


def _make(name, height, width, channels, classes, as_tensor):
    import numpy as np
    import torch
    from PIL import Image
    from torch.utils.data import Dataset

    class Offline(Dataset):
        def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False, split=None, **_):
            size = TRAIN if (train and split in (None, "train", "letters", "balanced")) else TEST
            generator = torch.Generator().manual_seed(0 if train else 1)
            shape = (size, height, width) if channels == 1 else (size, height, width, channels)
            data = torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator)
            labels = torch.randint(0, classes, (size,), generator=generator)
            self.data = data if as_tensor else data.numpy()
            self.targets = labels if as_tensor else labels.tolist()
            self.labels = labels.numpy()
            self.transform, self.target_transform = transform, target_transform
            self.classes = [str(i) for i in range(classes)]
            self.root, self.train = root, train
            for old in ("train_data", "test_data"):
                setattr(self, old, self.data)
            for old in ("train_labels", "test_labels"):
                setattr(self, old, self.targets)

        def __len__(self):
            return len(self.data)

        def __getitem__(self, index):
            array = np.asarray(self.data[index])
            image = Image.fromarray(array, mode="L" if channels == 1 else "RGB")
            target = int(self.targets[index])
            if self.transform is not None:
                image = self.transform(image)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return image, target

    Offline.__name__ = Offline.__qualname__ = name
    return Offline


def _patch(module):
    for name, shape in SHAPES.items():
        if hasattr(module, name):
            setattr(module, name, _make(name, *shape))


class _After(importlib.abc.MetaPathFinder):
    """Runs `_patch` right after `torchvision.datasets` is imported."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torchvision.datasets":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _After())

"""A reinforcement-learning transform (an embodied-navigation repository's preprocessing) takes
observations that are tensors during training and NumPy arrays at test time, and moves both with
a hard-coded `.cuda()`; the rollout storage has a `cuda()` of its own. The storage's method does
not make every `.cuda()` of the file its call: under `isinstance(x, torch.Tensor)` `x` is a
tensor, and `x.cuda()` fails on a CPU-only machine."""
import numpy as np
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class RolloutStorage:
    def __init__(self, steps, size):
        self.observations = torch.zeros(steps, size)

    def cuda(self):
        self.observations = self.observations.cuda()


def image_transform(encoder):
    def runner(x):
        if isinstance(x, torch.Tensor):  # for training
            x = x.to(device)
        else:  # for testing
            x = torch.Tensor(x).to(device)
        return encoder(x / 255.0)

    return runner


if __name__ == "__main__":
    encoder = nn.Linear(6, 3).to(device)
    transform = image_transform(encoder)
    storage = RolloutStorage(4, 6)
    print(transform(np.ones((2, 6), dtype=np.float32)).shape)

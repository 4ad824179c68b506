"""torch is imported only under `if __name__ == "__main__":` (a helper module that doubles
as a script). The device declaration needs its own top-level import."""
import random
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_batch(torch, n):
    return torch.randn(n, 3)


if __name__ == "__main__":
    import torch
    import torch.nn as nn

    random.seed(0)
    net = nn.Linear(3, 1).to(device)
    batch = make_batch(torch, 5).to(device)
    print(net(batch).shape)

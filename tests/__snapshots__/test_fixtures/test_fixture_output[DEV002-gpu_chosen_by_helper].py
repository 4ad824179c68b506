"""The GPU is chosen by a helper that sets CUDA_VISIBLE_DEVICES (as `auto_select_gpu` does in
many research repositories). A declaration at the module's top would run at import time,
before the helper: the `__main__` block declares after its call of the helper, and so does
the function that calls it."""
import os

import torch
import torch.nn as nn


def select_gpu(gpu="0"):
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    return gpu


def evaluate(weights):
    select_gpu("0")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2)
    model.load_state_dict(weights)
    model = model.to(device)
    x = torch.randn(8, 4, device=device)
    return model(x).sum().item()


if __name__ == "__main__":
    select_gpu()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    reference = nn.Linear(4, 2).to(device)
    print(evaluate({k: v.cpu() for k, v in reference.state_dict().items()}))

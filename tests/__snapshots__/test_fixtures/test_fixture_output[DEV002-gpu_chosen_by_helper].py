# devfix: no-run (the module-level .cuda() is reported, not fixed: a declaration there would run before select_gpu)
"""The GPU is chosen by a helper that sets CUDA_VISIBLE_DEVICES (as `auto_select_gpu` does in
many research repositories). Module-level code cannot get a declaration: it would run at
import time, before the helper. The function that calls the helper declares after the call."""
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
    reference = nn.Linear(4, 2).cuda()
    print(evaluate({k: v.cpu() for k, v in reference.state_dict().items()}))

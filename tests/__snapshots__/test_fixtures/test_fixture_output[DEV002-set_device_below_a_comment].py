"""Pins the first GPU before training, with a comment (in the author's language) above the
call, as a distributed-training chapter of a PyTorch book does. `torch.cuda.set_device`
raises without a GPU: it is guarded, and the comment stays above the new `if`."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# 选择第一块 GPU: choose the first GPU
if torch.cuda.is_available():
    torch.cuda.set_device(0)
model = nn.Linear(8, 2).to(device)
inputs = torch.randn(4, 8).to(device)
print(model(inputs).sum().item())

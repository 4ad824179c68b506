"""A script that pins its GPU through the environment at the top, before any CUDA query:
the new module-level declaration goes after that line."""
import os

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import torch
import torch.nn as nn

os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("GPU", "0")

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2)).to(device)
batch = torch.randn(5, 3, device=device)
print(net(batch).argmax(dim=1).tolist())

# devfix: --device-style=accelerator
import torch
from torch import nn

device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")

model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1)).to(device)
x = torch.rand(16, 4).to(device)
print(model(x).mean().item())

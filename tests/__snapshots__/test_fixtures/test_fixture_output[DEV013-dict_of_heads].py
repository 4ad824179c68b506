# devfix: --unsafe-fixes
"""A multi-task model keeping its heads in a dict."""
import torch
from torch import nn


class MultiTask(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.trunk = nn.Linear(4, d)
        self.heads = nn.ModuleDict({
            "age": nn.Linear(d, 1),
            "gender": nn.Linear(d, 2),
        })

    def forward(self, x):
        h = torch.relu(self.trunk(x))
        return {name: head(h) for name, head in self.heads.items()}


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = MultiTask().to(device)
outputs = model(torch.randn(3, 4).to(device))
print({k: tuple(v.shape) for k, v in outputs.items()})

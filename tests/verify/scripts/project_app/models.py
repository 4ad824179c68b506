import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n=6):
        super().__init__()
        self.fc = nn.Linear(n, 3)
        self.mask = torch.ones(n)

    def forward(self, x):
        return self.fc(x * self.mask)  # BUG-LINE


class NetWithBuffer(Net):
    def __init__(self, n=6):
        super().__init__(n)
        del self.mask
        self.register_buffer("mask", torch.ones(n), persistent=False)

"""A contrastive memory bank in the shape of SlowFast's: the module keeps `self.device` from
its own buffer as it is built (the CPU), and `resize` makes the new bank there, then moves it
with `.cuda()`. `self.device` is stale once the module moves, so the fix must not use it: the
bank goes to a cuda-if-available device, where `.cuda()` put it on a GPU machine."""
import math

import torch
import torch.nn as nn


class Memory(nn.Module):
    def __init__(self, length, dim):
        super().__init__()
        self.length = length
        self.dim = dim
        stdv = 1.0 / math.sqrt(dim / 3)
        self.register_buffer("memory", torch.rand(length, dim).mul_(2 * stdv).add_(-stdv))
        self.device = self.memory.device

    def resize(self, length, dim):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.length = length
        stdv = 1.0 / math.sqrt(dim / 3)
        del self.memory
        self.memory = torch.rand(length, dim, device=self.device).mul_(2 * stdv).add_(-stdv).to(device)

    def forward(self, x):
        return x @ self.memory.t()


if __name__ == "__main__":
    bank = Memory(16, 8)
    bank.resize(32, 8)
    print(bank(bank.memory[:2]).shape)

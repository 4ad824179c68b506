# plain tensor attribute: not moved by model.to(device)
import torch
import torch.nn as nn


class Masked(nn.Module):
    def __init__(self, n=6):
        super().__init__()
        self.proj = nn.Linear(n, n)
        self.mask = torch.tril(torch.ones(n, n))

    def forward(self, x):
        scores = self.proj(x)
        return scores.masked_fill(self.mask == 0, float("-inf"))  # BUG-LINE


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Masked().to(device)
print(model(torch.randn(6, 6, device=device)).sum())

# a register_buffer mask moves with the module
import torch
import torch.nn as nn


class Masked(nn.Module):
    def __init__(self, n=6):
        super().__init__()
        self.proj = nn.Linear(n, n)
        self.register_buffer("mask", torch.tril(torch.ones(n, n)), persistent=False)

    def forward(self, x):
        return self.proj(x).masked_fill(self.mask == 0, float("-inf")).softmax(-1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Masked().to(device)
out = model(torch.randn(6, 6, device=device))
print(out.sum().item(), out.detach().cpu().numpy().shape)

# a per-timestep table kept as a plain tensor attribute, indexed in forward with GPU timesteps
import torch
import torch.nn as nn
import torch.nn.functional as F


class Denoiser(nn.Module):
    def __init__(self, steps=100, dim=16):
        super().__init__()
        self.table = torch.randn(steps, dim)
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, dim))

    def forward(self, x, t):
        return self.net(x + self.table[t])  # BUG-LINE


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Denoiser().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x = torch.randn(8, 16).to(device)
    t = torch.randint(0, 100, (8,)).to(device)
    loss = F.mse_loss(model(x, t), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

"""A physics-informed training script (in the style of physics_informed's `cavity_flow.py`): it
declares `device = torch.device('cuda')` but places nothing with it, moving the model and the
data with `.cuda()`. DEV002 rewrites those moves to `.to(device)`, so the declaration must
fall back to the CPU too, or the fixed script still fails without a GPU."""
import torch
import torch.nn as nn

data_input = torch.rand(16, 3)
data_output = torch.rand(16, 1)

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def spectral_loss(out):
    device = out.device
    k = torch.arange(out.shape[0], device=device, dtype=out.dtype)
    return (k[:, None] * out).pow(2).mean()


model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = data_input.to(device)
y = data_output.to(device)
for _ in range(5):
    optimizer.zero_grad()
    out = model(x)
    loss = nn.functional.mse_loss(out, y) + 1e-3 * spectral_loss(out)
    loss.backward()
    optimizer.step()
print(loss.item())

import torch as T
from torch import nn

device = T.device("cuda" if T.cuda.is_available() else "cpu")


class TinyRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


net = TinyRegressor().to(device)  # crashes on a laptop without a GPU
opt = T.optim.SGD(net.parameters(), lr=0.1)
features = T.randn(32, 6).to(device)
target = T.randn(32, 1).to(device)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(features), target)
    loss.backward()
    opt.step()
print(f"final loss {loss.item():.4f}")

# model parallel over two GPUs: the residual taken from stage 1 is still on cuda:0
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoStage(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Linear(8, 16), nn.ReLU()).to("cuda:0")
        self.stage2 = nn.Sequential(nn.Linear(16, 16), nn.ReLU()).to("cuda:1")
        self.head = nn.Linear(16, 2).to("cuda:1")

    def forward(self, x):
        h = self.stage1(x.to("cuda:0"))
        y = self.stage2(h.to("cuda:1"))
        return self.head(y + h)  # BUG-LINE


model = TwoStage()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for i in range(0, 32, 8):
    out = model(X[i:i + 8])
    loss = F.cross_entropy(out, Y[i:i + 8].to(out.device))
    opt.zero_grad()
    loss.backward()
    opt.step()

# model parallel over two GPUs: activations moved between the stages, labels to the output's GPU
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
        return self.head(y + h.to(y.device))


torch.manual_seed(0)
model = TwoStage()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(64, 8)
Y = (X[:, 0] > 0).long()
losses = []
for epoch in range(5):
    for i in range(0, 64, 16):
        out = model(X[i:i + 16])
        loss = F.cross_entropy(out, Y[i:i + 16].to(out.device))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
assert out.device == torch.device("cuda:1"), out.device
assert model.stage1[0].weight.grad.device == torch.device("cuda:0")
assert model.head.weight.grad.device == torch.device("cuda:1")
assert losses[-1] < losses[0], losses
print("losses", losses[0], losses[-1])

# DataParallel over every GPU: inputs scattered, the module replicated (buffers too),
# outputs gathered on cuda:0; the labels go to cuda:0
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Scaled(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.fc1 = nn.Linear(dim, 16)
        self.fc2 = nn.Linear(16, 2)
        self.register_buffer("scale", torch.ones(dim), persistent=False)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        self.seen = []  # devices the replicas ran on (a list shared by the replicas)

    def forward(self, x):
        self.seen.append(str(x.device))
        self.calls += 1  # kept only from the replica on cuda:0, which shares the module's buffers
        return self.fc2(F.relu(self.fc1(x * self.scale)))


torch.manual_seed(0)
net = Scaled().to(device)
model = nn.DataParallel(net)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(64, 8)
Y = (X[:, 0] > 0).long()
losses = []
for epoch in range(5):
    for i in range(0, 64, 16):
        out = model(X[i:i + 16])
        loss = F.cross_entropy(out, Y[i:i + 16].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
n = torch.cuda.device_count()
assert set(net.seen) == {f"cuda:{i}" for i in range(n)}, (n, set(net.seen))
assert out.device == torch.device("cuda:0") and out.shape == (16, 2)
assert net.fc1.weight.grad.device == torch.device("cuda:0")
assert net.calls.item() == len(losses), (net.calls.item(), len(losses))
assert losses[-1] < losses[0], losses
print(n, "GPUs, losses", losses[0], losses[-1])

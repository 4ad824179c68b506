# DataParallel over two GPUs: a plain tensor attribute stays on cuda:0, replica 1 runs on cuda:1
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Scaled(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.fc = nn.Linear(dim, 2)
        self.scale = torch.ones(dim, device=device)

    def forward(self, x):
        return self.fc(x * self.scale)  # BUG-LINE


model = nn.DataParallel(Scaled().to(device))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))
for i in range(0, 32, 8):
    out = model(X[i:i + 8])
    loss = F.cross_entropy(out, Y[i:i + 8].to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

# DataParallel used correctly: model moved once, labels moved (outputs land on cuda:0)
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
if torch.cuda.device_count() >= 1:
    model = nn.DataParallel(model)
model.to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
for i in range(0, 32, 8):
    out = model(X[i:i + 8])  # DataParallel scatters CPU inputs itself
    loss = nn.functional.cross_entropy(out, y[i:i + 8].to(device))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("ok", out.device)

# one-hot targets built on the labels' device: torch.eye(10, device=device)[labels]
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 10).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
X, Y = torch.randn(32, 8), torch.randint(0, 10, (32,))
for i in range(0, 32, 8):
    x, labels = X[i:i + 8].to(device), Y[i:i + 8].to(device)
    onehot = torch.eye(10, device=device)[labels]
    loss = F.mse_loss(model(x).softmax(1), onehot)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

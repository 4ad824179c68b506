import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"

net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1)).to(device)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
criterion = nn.BCEWithLogitsLoss()
dl = DataLoader(TensorDataset(torch.randn(30, 6), torch.randint(0, 2, (30, 1)).float()), batch_size=10, pin_memory=True)

for epoch in range(2):
    for batch in dl:
        features, target = batch
        features, target = features.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(net(features), target)
        loss.backward()
        optimizer.step()
    print(epoch, round(loss.item(), 4))

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
optimizer = torch.optim.Adam(model.parameters())
criterion = nn.CrossEntropyLoss()
train_loader = DataLoader(
    TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,))),
    batch_size=16,
    shuffle=True,
    pin_memory=torch.cuda.is_available(),
)
val_loader = DataLoader(TensorDataset(torch.randn(16, 16), torch.randint(0, 4, (16,))), batch_size=16, pin_memory=True)

for epoch in range(2):
    for x, y in train_loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        for x, y in val_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            print(epoch, criterion(model(x), y).item())

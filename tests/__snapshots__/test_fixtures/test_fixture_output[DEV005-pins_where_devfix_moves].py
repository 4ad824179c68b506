import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(20, 10), nn.ReLU(), nn.Linear(10, 2)).to(device)
optimizer = torch.optim.Adam(model.parameters())
train_loader = DataLoader(
    TensorDataset(torch.randn(60, 20), torch.randint(0, 2, (60,))),
    batch_size=20,
    shuffle=True,
    pin_memory=True,
)
for epoch in range(2):
    for inputs, labels in train_loader:
        inputs, labels = inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())

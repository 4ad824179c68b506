import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_loader(X, y, batch_size=16, shuffle=True):
    dataset = TensorDataset(X, y)
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, pin_memory=True)


def train_epoch(model, loader, optimizer):
    for xb, yb in loader:
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


model = nn.Linear(7, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = make_loader(torch.randn(48, 7), torch.randint(0, 2, (48,)))
for epoch in range(2):
    print(epoch, train_epoch(model, train_loader, optimizer))

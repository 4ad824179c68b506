"""A custom Dataset that moves every sample to the GPU itself, with a pinning loader.

Advice seen in many articles, and wrong: with `pin_memory=True` the first batch fails
("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned"), and with
worker processes CUDA cannot be initialised in the forked workers.
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset


class MyDataset(Dataset):
    def __init__(self, X, y, device):
        self.X = X.to(device)
        self.y = y.to(device)
        self.device = device

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return self.X[idx].to(self.device), self.y[idx].to(self.device)


X = torch.randn(1000, 10)
y = torch.randn(1000, 1)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dataset = MyDataset(X, y, device)
model = nn.Linear(10, 1).to(device)

train_loader = DataLoader(dataset, batch_size=32, pin_memory=True)
optimizer = optim.SGD(model.parameters(), lr=0.01)

for epoch in range(3):
    for batch_X, batch_y in train_loader:
        output = model(batch_X)
        loss = nn.MSELoss()(output, batch_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: {loss.item():.4f}")

# The seed's "custom dataset + pinned memory" advice: data moved to the GPU inside the
# Dataset, and the loader asked to pin it (a crash on a real GPU).
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset


class RegressionData(Dataset):
    def __init__(self, X, y, device):
        self.X = X  # keep the whole set in memory
        self.y = y
        self.device = device

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return self.X[idx], self.y[idx]


X = torch.randn(200, 10)
y = torch.randn(200, 1)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dataset = RegressionData(X, y, device)
model = nn.Linear(10, 1).to(device)

train_loader = DataLoader(dataset, batch_size=32, pin_memory=True)
optimizer = optim.SGD(model.parameters(), lr=0.01)

for epoch in range(2):
    for batch_X, batch_y in train_loader:
        batch_X, batch_y = batch_X.to(device, non_blocking=True), batch_y.to(device, non_blocking=True)
        output = model(batch_X)
        loss = nn.MSELoss()(output, batch_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return (torch.randn(6), torch.randn(6)), torch.tensor(float(i % 2))


class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(6, 3)

    def forward(self, left, right):
        return (self.encoder(left) - self.encoder(right)).pow(2).sum(1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Siamese().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
pair_loader = DataLoader(Pairs(), batch_size=4, pin_memory=True)

for epoch in range(2):
    for (left, right), same in pair_loader:
        right, same = right.to(device, non_blocking=True), same.to(device, non_blocking=True)
        left = left.to(device)
        distance = model(left, right)
        loss = (same * distance + (1 - same) * torch.relu(1.0 - distance)).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())

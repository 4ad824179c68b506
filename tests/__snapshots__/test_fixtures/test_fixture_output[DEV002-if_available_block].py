import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

X = torch.randn(100, 10)
y = torch.randn(100, 1)
dataset = TensorDataset(X, y)
model = nn.Linear(10, 1)
criterion = nn.MSELoss()

# Use the GPU when there is one
model.to(device)
criterion.to(device)

train_loader = DataLoader(dataset, batch_size=32)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(2):
    for batch_X, batch_y in train_loader:
        batch_X, batch_y = batch_X.to(device), batch_y.to(device)
        output = model(batch_X)
        loss = criterion(output, batch_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

X = torch.randn(256, 10)
y = torch.randn(256, 1)
train_loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)

model = nn.Linear(10, 1).to(device)  # "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"
optimizer = optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.MSELoss()

for epoch in range(3):
    for batch_X, batch_y in train_loader:
        batch_X, batch_y = batch_X.to(device), batch_y.to(device)
        loss = loss_fn(model(batch_X), batch_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print("done", loss.item())

"""Linear regression on a TensorDataset: the model goes to the GPU, the data does not."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

X = torch.randn(1000, 10)
y = X @ torch.randn(10, 1) + 0.1 * torch.randn(1000, 1)
dataset = TensorDataset(X, y)
model = nn.Linear(10, 1)

if torch.cuda.is_available():
    model.cuda()

train_loader = DataLoader(dataset, batch_size=64, shuffle=True)
optimizer = optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.MSELoss()

for epoch in range(5):
    for batch_X, batch_y in train_loader:
        output = model(batch_X)
        loss = loss_fn(output, batch_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: mse {loss.item():.4f}")

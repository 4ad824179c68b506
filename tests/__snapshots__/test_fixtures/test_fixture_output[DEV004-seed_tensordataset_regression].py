# A regression loop in the spirit of the "tensors on different devices" seed: the model goes
# to the GPU, the loader's batches do not.
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

X = torch.randn(256, 10)
y = torch.randn(256, 1)
dataset = TensorDataset(X, y)
model = nn.Linear(10, 1)

if torch.cuda.is_available():
    model.cuda()

train_loader = DataLoader(dataset, batch_size=32, pin_memory=True)
optimizer = optim.SGD(model.parameters(), lr=0.01)

for epoch in range(3):
    for batch_X, batch_y in train_loader:
        batch_X, batch_y = batch_X.to(device, non_blocking=True), batch_y.to(device, non_blocking=True)
        output = model(batch_X)
        loss = nn.MSELoss()(output, batch_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())

# devfix: --dataset-placement=device
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
X = torch.randn(64, 10)
y = torch.randn(64, 1)
# RuntimeError on a GPU: cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned
train_loader = DataLoader(
    TensorDataset(X.to(device), y.to(device)),
    batch_size=16,
)
model = nn.Linear(10, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for batch_X, batch_y in train_loader:
    loss = nn.functional.mse_loss(model(batch_X), batch_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

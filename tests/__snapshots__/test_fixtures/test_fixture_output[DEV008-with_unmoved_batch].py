import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 1).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.rand(16, 1)), batch_size=4, pin_memory=True)

for x, y in train_loader:
    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    # label smoothing towards 0.5
    smoothed = 0.9 * y + 0.1 * torch.full((y.size(0), 1), 0.5, device=device)
    loss = nn.functional.binary_cross_entropy_with_logits(model(x), smoothed)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

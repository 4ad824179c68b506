import torch
import torch.nn as nn
import torch.utils.data as tud
from torch.utils.data import DataLoader as Loader, TensorDataset as TD

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

X, y = torch.randn(40, 4), torch.randn(40, 1)
train_dl = Loader(TD(X, y), batch_size=10, pin_memory=True)
valid_dl = tud.DataLoader(tud.TensorDataset(X[:8], y[:8]), batch_size=4, num_workers=2, pin_memory=True)

for xb, yb in train_dl:
    xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
    loss = nn.functional.mse_loss(model(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    for xb, yb in valid_dl:
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        print(nn.functional.mse_loss(model(xb), yb).item())

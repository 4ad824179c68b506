# devfix: --dataset-placement=device
import torch
import torch.nn as nn
import torch.utils.data as tud
from torch.utils.data import DataLoader as Loader, TensorDataset as TD

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

X, y = torch.randn(40, 4), torch.randn(40, 1)
train_dl = Loader(TD(X.to(device), y.to(device)), batch_size=10)
valid_dl = tud.DataLoader(tud.TensorDataset(X[:8].to(device), y[:8].to(device)), batch_size=4)

for xb, yb in train_dl:
    loss = nn.functional.mse_loss(model(xb), yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    for xb, yb in valid_dl:
        print(nn.functional.mse_loss(model(xb), yb).item())

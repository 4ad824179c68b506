"""Buggy (the same forecasting script, with the windows left on the CPU): the model is on the
device, and the loaders of the `random_split` parts yield CPU batches. devfix moves them in
the loops (DEV004) and pins the loaders it moves from (DEV005)."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

data = np.random.rand(40, 5)
dataset = TensorDataset(torch.tensor(data[:, :-1], dtype=torch.float32), torch.tensor(data[:, -1], dtype=torch.float32))
train_dataset, val_dataset = torch.utils.data.random_split(dataset, [32, 8])
train_loader = DataLoader(train_dataset, batch_size=4, shuffle=True, pin_memory=True)
val_loader = DataLoader(Subset(val_dataset, range(6)), batch_size=4, pin_memory=True)

model = nn.Linear(4, 1).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.MSELoss()
for epoch in range(2):
    for X_batch, y_batch in train_loader:
        X_batch, y_batch = X_batch.to(device, non_blocking=True), y_batch.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(X_batch), y_batch.unsqueeze(-1))
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = 0.0
        for xb, yb in val_loader:
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            val_loss += criterion(model(xb), yb.unsqueeze(-1)).item()
    print(f"epoch {epoch}: val {val_loss:.3f}")

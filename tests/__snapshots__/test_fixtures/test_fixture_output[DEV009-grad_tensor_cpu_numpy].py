"""Plotting a regression fit: .cpu().numpy() on an output that still requires grad."""
import numpy as np
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

x = torch.linspace(-1, 1, 20).unsqueeze(1)
y = 3 * x + 0.5
net = nn.Linear(1, 1).to(device)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(5):
    xb, yb = x.to(device), y.to(device)
    prediction = net(xb)
    loss = nn.functional.mse_loss(prediction, yb)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

fitted = prediction.detach().cpu().numpy()
weight = net.weight.detach().cpu().numpy()
residual = (prediction - yb).detach().cpu().numpy()
print(np.abs(fitted).max(), weight.shape, residual.shape, loss.item(), prediction.tolist()[0])

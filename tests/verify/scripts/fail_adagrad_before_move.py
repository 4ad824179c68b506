# Adagrad builds its state at construction: building it before model.to(device)
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 1)
opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
model.to(device)
x, y = torch.randn(8, 4).to(device), torch.randn(8, 1).to(device)
loss = nn.functional.mse_loss(model(x), y)
loss.backward()
opt.step()  # BUG-LINE

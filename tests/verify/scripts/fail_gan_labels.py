# GAN labels created in the loop without device=
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
netD = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid()).to(device)
criterion = nn.BCELoss()
data = torch.randn(32, 4)
for i in range(0, 32, 8):
    real = data[i:i + 8].to(device)
    label = torch.full((real.size(0),), 1.0)
    err = criterion(netD(real).view(-1), label)  # BUG-LINE
    err.backward()

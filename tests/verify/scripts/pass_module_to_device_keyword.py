"""A model moved with the keyword form `.to(device=device)` (as Deep Learning with PyTorch
writes it) is on the device: nn.Module.to parses its arguments with torch's own parser."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(device=device)
half = nn.Linear(4, 2).to(device=device, dtype=torch.float64)
x = torch.randn(3, 4).to(device=device)
print(model(x).shape, half(x.double()).dtype, model[0].weight.device)

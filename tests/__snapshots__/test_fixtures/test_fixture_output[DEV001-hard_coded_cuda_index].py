# devfix: verify-devices=2  (cuda:1 needs a second GPU: verified with `devfix verify --devices 2`)
import torch
import torch.nn as nn

# second GPU of the workstation
device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")

model = nn.Linear(8, 2).to(device)
x = torch.randn(4, 8, device=device)
print(model(x).shape)

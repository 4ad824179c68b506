# written on a two-GPU workstation: cuda:1 hard-coded (fails on a one-GPU machine,
# runs with --devices 2)
import torch
import torch.nn as nn

device = torch.device("cuda:1" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 2).to(device)  # BUG-LINE
out = model(torch.randn(4, 8, device=device))
print(out.shape, out.device)

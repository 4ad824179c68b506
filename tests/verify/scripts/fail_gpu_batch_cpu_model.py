# batches moved, model never moved: GPU batch into a CPU model
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(8, 2)
X = torch.randn(16, 8)
for i in range(0, 16, 4):
    xb = X[i:i + 4].to(device)
    out = model(xb)  # BUG-LINE

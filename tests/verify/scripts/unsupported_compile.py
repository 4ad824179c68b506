import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.compile(nn.Linear(4, 2).to(device))
print(model(torch.randn(2, 4, device=device)))

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
try:
    with torch.autocast(device_type="cuda"):
        print(model(torch.randn(2, 4, device=device)))
except Exception:
    print("swallowed")

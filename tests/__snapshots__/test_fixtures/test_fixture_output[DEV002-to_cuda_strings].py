import os
import tempfile

import torch
import torch.nn as nn

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Linear(4, 4).to(dev)
mask = torch.ones(4, 4, device=dev).tril()
scale = torch.tensor(0.5).to(dev, dtype=torch.float32)
out = (model(torch.eye(4).to(dev)) * mask) * scale

path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(model.state_dict(), path)
state = torch.load(path, map_location=dev)
model.load_state_dict(state)
print(out.sum().item())

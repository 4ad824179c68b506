# a checkpoint saved on the GPU, loaded with map_location=device
import os
import tempfile

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save(model.state_dict(), path)
state = torch.load(path, map_location=device)
model.load_state_dict(state)
print(model(torch.randn(1, 4, device=device)).shape)

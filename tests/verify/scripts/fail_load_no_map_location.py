# a checkpoint saved on the GPU, loaded without map_location
import os
import tempfile

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save(model.state_dict(), path)
state = torch.load(path)  # BUG-LINE
model.load_state_dict(state)
print("loaded")

# devfix: input-runs
"""Inference script that only restores weights: no device variable anywhere."""
import os
import tempfile

import torch
from torch import nn

weights = os.path.join(tempfile.mkdtemp(), "classifier.pth")
torch.save(nn.Linear(4, 3).state_dict(), weights)

classifier = nn.Linear(4, 3)
classifier.load_state_dict(torch.load(weights, weights_only=True, map_location="cpu"))
classifier.eval()
print(sum(p.numel() for p in classifier.parameters()))

# devfix: input-runs
"""Export a trained checkpoint's weights (a conversion script: no device, no training)."""
import os
import tempfile

import torch
from torch import nn


def build():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))


folder = tempfile.mkdtemp()
trained = os.path.join(folder, "mnist_cnn.pt")
torch.save(build().state_dict(), trained)

net = build()
net.load_state_dict(torch.load(trained, weights_only=True, map_location="cpu"))
torch.save(net.state_dict(), os.path.join(folder, "mnist_cnn_export.pt"))
print(sorted(net.state_dict()))

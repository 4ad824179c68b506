"""A restoration demo (in the shape of MPRNet's demo.py) that builds its architecture by name
at run time, moves it with a hard-coded `.cuda()` and loads the released GPU weights: once
the `.cuda()` calls are fixed, the load itself must not need CUDA either."""
import os
import tempfile
from collections import OrderedDict

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

ARCHITECTURES = {name: getattr(nn, name) for name in ("Linear", "Bilinear")}
TRANSFORMS = {name: getattr(torch, name) for name in ("as_tensor", "from_numpy")}


def save_img(path, img):
    print("saving", path, tuple(img.shape))


def load_checkpoint(model, weights):
    checkpoint = torch.load(weights, map_location=device)
    try:
        model.load_state_dict(checkpoint["state_dict"])
    except RuntimeError:
        state_dict = OrderedDict((k[7:], v) for k, v in checkpoint["state_dict"].items())
        model.load_state_dict(state_dict)


def release_weights(folder):
    """The authors' released file (saved from their GPU model)."""
    path = os.path.join(folder, "model_deblurring.pth")
    torch.save({"state_dict": nn.Linear(8, 8).state_dict()}, path)
    return path


model = ARCHITECTURES["Linear"](8, 8)
model.to(device)
weights = release_weights(tempfile.mkdtemp())
load_checkpoint(model, weights)
model.eval()
img = [0.5] * 8
inp = TRANSFORMS["as_tensor"](img).unsqueeze(0).to(device)
with torch.no_grad():
    restored = torch.clamp(model(inp), 0, 1)
save_img("out.png", restored.permute(1, 0).cpu())

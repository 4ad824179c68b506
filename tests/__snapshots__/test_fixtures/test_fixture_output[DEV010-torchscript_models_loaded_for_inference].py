"""Face-detection inference over TorchScript models (in the style of Pytorch-MTCNN's
`infer_path.py`): the cascade's networks were exported with `torch.jit.save` from a model on
the GPU, and `torch.jit.load` without `map_location` puts their CUDA tensors back on a GPU,
which a CPU-only machine does not have. Loaded on the CPU, each is then moved to the device."""
import os
import tempfile

import torch
import torch.nn as nn


class PNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 10, 3)
        self.cls = nn.Conv2d(10, 2, 1)

    def forward(self, x):
        return self.cls(torch.relu(self.conv(x)))


def exported_model():
    """Stands in for the training run that exported the network (on a GPU machine)."""
    path = os.path.join(tempfile.mkdtemp(), "PNet.pth")
    torch.jit.save(torch.jit.script(PNet().to(device)), path)
    return path


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
pnet = torch.jit.load(exported_model(), map_location="cpu")
pnet.to(device)
pnet.eval()

image = torch.rand(1, 3, 12, 12).to(device)
with torch.no_grad():
    scores = torch.softmax(pnet(image), dim=1)
print(scores.shape)

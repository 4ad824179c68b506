"""Retinaface-style training script: the GPU count comes from the script's own configuration
(`cfg['ngpu']`, 4 for the large backbone), not from a caller. `if num_gpu > 1:` then takes the
DataParallel branch on any machine, a CPU-only one included, so its `.cuda()` is as hard-coded
as the `else` branch's and both are rewritten."""
import json

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

cfg = json.loads('{"name": "Resnet50", "ngpu": 4, "gpu_train": true}')
num_gpu = cfg["ngpu"]
gpu_train = cfg["gpu_train"]

net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
if num_gpu > 1 and gpu_train:
    net = torch.nn.DataParallel(net).to(device)
else:
    net = net.to(device)

images = torch.randn(4, 8).to(device)
print(net(images).shape)

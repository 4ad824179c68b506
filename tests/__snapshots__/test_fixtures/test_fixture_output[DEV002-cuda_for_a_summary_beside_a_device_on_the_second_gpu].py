# devfix: no-run (the report leaves `.cuda()`, which needs a GPU)
"""A face-recognition training script (a Siamese network): it trains on `cuda:1`, and first
prints the model with torchsummary, whose test input is made on the current GPU, so it puts the
model there with `summary(model.cuda(), ...)` before moving it to `cuda:1`. `.to(device)` would
put it on the second GPU, where the summary's input is not: the finding is reported, not fixed.
Its CUDA-only tensor type is fixed as ever (it names no device)."""
import torch
from torch import nn
from torchsummary import summary

use_cuda = torch.cuda.is_available()
device = torch.device("cuda:1" if use_cuda else "cpu")

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
summary(model.cuda(), (3, 8, 8))
model = model.to(device)
margin = (torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor)([0.35])
print(margin)

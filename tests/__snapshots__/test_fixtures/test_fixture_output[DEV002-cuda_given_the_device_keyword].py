"""`.cuda(device=0)` is `.cuda(0)` spelled with a keyword (a progressive GAN's generator and
its noise): GPU 0 hard-coded, which a CPU-only machine does not have."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

generator = nn.Sequential(nn.Linear(8, 16), nn.Tanh()).to(device)
noise = torch.randn(2, 8).to(device, non_blocking=True)
print(generator(noise).shape)

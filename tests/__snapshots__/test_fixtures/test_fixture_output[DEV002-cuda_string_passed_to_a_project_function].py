"""A hard-coded `device='cuda'` passed to the project's own sampling helper (BigGAN's
`utils.interp_sheet(..., device='cuda')` at each checkpoint): the helper makes its noise
there, so on a CPU-only machine the training run dies at its first save. The string is the
current GPU, like `.cuda()`, and becomes the device variable."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def interp_sheet(G, num_per_sheet, device="cuda"):
    zs = torch.randn(num_per_sheet, 4, device=device)
    with torch.no_grad():
        return G(zs)


def save_and_sample(G):
    return interp_sheet(G, num_per_sheet=3, device=device)


G = nn.Linear(4, 2).to(device)
for itr in range(1, 5):
    if itr % 2 == 0:
        print(save_and_sample(G).shape)

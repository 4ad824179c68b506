"""A DCGAN script in the style of many GAN tutorials: `--cuda` is parsed with `type=bool` and
defaults to true. argparse calls `bool` on the text given, so `--cuda False` is true as well:
the guarded `.cuda()` calls run on every machine, and a CPU-only one crashes at the first."""
import argparse

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--z_size", type=int, default=4)
parser.add_argument("--cuda", type=bool, default=True, help="enables cuda")
param = parser.parse_args([])

G = nn.Sequential(nn.Linear(param.z_size, 8), nn.Tanh())
D = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())
criterion = nn.BCELoss()
z = torch.randn(param.batch_size, param.z_size)
y = torch.ones(param.batch_size, 1)

if param.cuda:
    G = G.to(device)
    D = D.to(device)
    criterion = criterion.cuda()
    z = z.to(device)
    y = y.to(device)

optimizer = torch.optim.Adam(D.parameters(), lr=1e-3)
for step in range(2):
    images = torch.randn(param.batch_size, 8)
    if param.cuda:
        images = images.to(device)
    loss = criterion(D(images), y) + criterion(D(G(z).detach()), 1 - y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())

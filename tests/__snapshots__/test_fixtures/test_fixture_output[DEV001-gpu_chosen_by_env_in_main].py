"""The script picks its GPU from an option by setting CUDA_VISIBLE_DEVICES in main().
CUDA reads the variable at its first query, so the device is declared after that choice,
not at import time and not at the top of main()."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", default=None, help="which GPU to use, e.g. 1")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)
    if args.gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Regressor().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    inputs, targets = torch.randn(32, 6, device=device), torch.randn(32, 1, device=device)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        print(epoch, round(loss.item(), 4))


if __name__ == "__main__":
    main([])

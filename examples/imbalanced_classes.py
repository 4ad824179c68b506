"""Imbalanced classification trained from main(), on the second GPU of a workstation.

Three device bugs: `torch.device("cuda:1")` fails without that GPU, the Adagrad optimizer
is built before the model moves (its state stays on the CPU), and the class-weighted loss
keeps its weight tensor on the CPU.
"""
import torch
from torch import nn


def make_data(n=512, d=16):
    x = torch.randn(n, d)
    y = (x[:, 0] > 1.0).long() + (x[:, 1] > 1.5).long()
    return x, y


def main():
    """Train for a few steps and print the loss."""
    device = torch.device("cuda:1")
    x, y = make_data()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)
    model.to(device)

    counts = torch.bincount(y, minlength=3).float()
    criterion = nn.CrossEntropyLoss(weight=counts.sum() / (3 * counts))
    x, y = x.to(device), y.to(device)
    for step in range(20):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"loss after 20 steps: {loss.item():.3f}")


if __name__ == "__main__":
    main()

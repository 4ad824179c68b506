"""The twin of `ok_training_loop_after_an_evaluate_option_always_on`: here `--evaluate` is off
by default, so `main` trains, and the hard-coded `.cuda()` calls of `train` crash a
CPU-only machine: they are rewritten."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", default=2, type=int)
parser.add_argument("-e", "--evaluate", dest="evaluate", action="store_true")
args = parser.parse_args([])

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(loader, model, criterion, optimizer):
    model.train()
    for images, target in loader:
        target = target.to(device)
        loss = criterion(model(images.to(device)), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model, criterion):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for images, target in loader:
            images, target = images.to(device), target.to(device)
            total += criterion(model(images), target).item()
    return total


def main():
    model = nn.Linear(8, 3).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    val_loader = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(2)]
    if args.evaluate:
        print(validate(val_loader, model, criterion))
        return
    for _ in range(args.epochs):
        train(val_loader, model, criterion, optimizer)
        validate(val_loader, model, criterion)


if __name__ == "__main__":
    main()

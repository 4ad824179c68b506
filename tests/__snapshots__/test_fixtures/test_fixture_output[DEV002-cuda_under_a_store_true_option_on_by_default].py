"""A segmentation training script in the style of ERFNet's `train/main.py`: `--cuda` is a
`store_true` flag whose default is already `True`, so there is no way to turn it off (the
author notes that "cpu-only has not been tested"). The guarded `.cuda()` calls run on every
machine, and a CPU-only one crashes at the first."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train(args, model):
    device = next(model.parameters()).device
    weight = torch.ones(3)
    weight[0] = 0.5
    if args.cuda:
        weight = weight.to(device, copy=True)
    criterion = nn.CrossEntropyLoss(weight=weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(8, 4, 6, 6), torch.randint(0, 3, (8, 6, 6)))
    for epoch in range(args.num_epochs):
        for images, labels in DataLoader(data, batch_size=4):
            if args.cuda:
                images = images.to(device)
                labels = labels.to(device)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


def main(args):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Conv2d(4, 3, 3, padding=1)
    if args.cuda:
        model = torch.nn.DataParallel(model).to(device)
    train(args, model)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cuda", action="store_true", default=True)
    parser.add_argument("--num-epochs", type=int, default=2)
    main(parser.parse_args())

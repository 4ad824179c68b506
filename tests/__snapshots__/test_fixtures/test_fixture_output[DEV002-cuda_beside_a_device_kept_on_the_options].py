"""A pose-estimation training script (tensorboy's train_VGG19.py): `cli()` parses
`--disable-cuda` and keeps the device it chose on the options (`args.device`), but the model
and the batches are moved with a bare `.cuda()`. The program's own device is the one to use:
a cuda-if-available device declared beside it would ignore `--disable-cuda`."""

import argparse

import torch
from torch import nn


def cli():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--disable-cuda", action="store_true", help="disable CUDA")
    args = parser.parse_args()
    args.device = torch.device("cpu")
    if not args.disable_cuda and torch.cuda.is_available():
        args.device = torch.device("cuda")
    return args


args = cli()


def train(loader, model, criterion, optimizer):
    for img, target in loader:
        img = img.to(args.device)
        target = target.to(args.device)
        loss = criterion(model(img), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


model = torch.nn.DataParallel(nn.Linear(6, 2)).to(args.device)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(4, 6), torch.randn(4, 2)) for _ in range(3)]
for epoch in range(args.epochs):
    print(train(loader, model, criterion, optimizer))

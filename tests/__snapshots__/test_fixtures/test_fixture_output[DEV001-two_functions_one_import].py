"""A segmentation trainer's layout (Lextal/pspnet-pytorch's train.py): the file imports only
`from torch import nn` and friends, a helper builds the network and `main()` trains it after
choosing the GPU, both with a hard-coded `.cuda()`. Each function gets its own device
declaration, and the `import torch` both need is added once. (The GPU is chosen with
`setdefault`, so a test run that hides the GPU keeps it hidden on a machine that has one.)"""
import os

from torch import nn
from torch import optim
from torch.utils.data import DataLoader, TensorDataset
import torch


def build_network():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    net = net.to(device)
    return net


def main(gpu="0"):
    from torch import randint, randn

    os.environ.setdefault("CUDA_VISIBLE_DEVICES", gpu)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = build_network()
    optimizer = optim.SGD(net.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    loader = DataLoader(TensorDataset(randn(16, 6), randint(0, 3, (16,))), batch_size=4)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        optimizer.step()
    print(loss.item() >= 0)


if __name__ == "__main__":
    main()

import torch


def batches(n=32, size=8):
    X, Y = torch.randn(n, 6), torch.randint(0, 3, (n,))
    for i in range(0, n, size):
        yield X[i:i + size], Y[i:i + size]

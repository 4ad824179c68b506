"""A PGD attack (in the shape of Bag-of-Tricks-for-AT's `attack_pgd`) counts, per example, the
steps it took before early stopping, in a CPU tensor made in its restarts loop and indexed by
a mask made on the device: a bug once early stopping is on. The attack returns the counter
after the loop, and the training loop joins it with its own record (`torch.cat`). Made on
the device, the counter reaches that join on the device, so the record is made there too: a
fix of the counter alone would break the join on the default path, which works."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 3).to(device)


def attack_pgd(model, X, y, iters, restarts=1, early_stop=False):
    for _ in range(restarts):
        delta = torch.zeros_like(X)
        delta.requires_grad = True
        stop_count = iters * torch.ones(y.shape[0], dtype=torch.int32).to(device)
        iter_count = torch.zeros(y.shape[0], device=device)
        for _ in range(iters):
            output = model(X + delta)
            if early_stop:
                fooled = (output.max(1)[1] != y).to(dtype=torch.int32)
                stop_count = stop_count - fooled
                index = torch.where(stop_count > 0)[0]
                iter_count[index] = iter_count[index] + 1
            loss = F.cross_entropy(output, y)
            loss.backward()
            delta.data = (delta + 0.01 * delta.grad.sign()).clamp(-0.1, 0.1)
            delta.grad.zero_()
    return delta.detach(), iter_count


def main():
    record = torch.tensor([], device=device)
    for step in range(3):
        X = torch.randn(8, 4).to(device)
        y = torch.randint(0, 3, (8,)).to(device)
        delta, counts = attack_pgd(model, X, y, 5)
        record = torch.cat((record, counts))
    print(record.mean().item())


main()

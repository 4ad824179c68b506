"""Helpers defined before the model (as the practical-pytorch notebooks write them) and the
model built below them, all with hard-coded CUDA: one module-level `device`, declared before
the helpers, serves them all (spec principle 6), instead of a copy at the top of each helper."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def random_batch(batch_size):
    inputs = torch.randn(batch_size, 8).to(device)
    targets = torch.randint(0, 3, (batch_size,)).to(device)
    return inputs, targets


def init_hidden(batch_size):
    return torch.zeros(batch_size, 16).to(device)


model = nn.Sequential(nn.Linear(8, 16), nn.Tanh()).to(device)
head = nn.Linear(16, 3).to(device)
criterion = nn.CrossEntropyLoss()
inputs, targets = random_batch(4)
hidden = model(inputs) + init_hidden(4)
print(criterion(head(hidden), targets).item())

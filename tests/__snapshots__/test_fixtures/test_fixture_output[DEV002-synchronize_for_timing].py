"""Timing a training step the way many scripts do: `torch.cuda.synchronize()` before reading
the clock. On a CPU-only machine it raises "Torch not compiled with CUDA enabled"; it only
means something where CUDA is, so it is guarded, and the `.cuda()` calls use the device."""
import time

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()

for step in range(3):
    inputs = torch.randn(16, 32).to(device)
    targets = torch.randint(0, 10, (16,)).to(device)
    start = time.perf_counter()
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    print(f"step {step}: loss {loss.item():.3f} in {time.perf_counter() - start:.4f}s")

# devfix: no-verify  (it reads torch.cuda.memory_allocated, which the simulator does not model)
"""A training script that logs the GPU memory it uses as it goes (in the style of RepLKNet's
`main.py`, which prints `torch.cuda.memory_allocated()` after each loading step). A readout
alone is a log line: on a CPU-only machine it gives 0 and the script trains on, once its
hard-coded `.cuda()` calls use the device."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
print("memory after building the model:", torch.cuda.memory_allocated())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 16).to(device)
    y = torch.randint(0, 2, (8,)).to(device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item(), "memory:", torch.cuda.memory_allocated())

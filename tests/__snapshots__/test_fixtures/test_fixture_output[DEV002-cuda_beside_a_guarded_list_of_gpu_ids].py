"""A classifier script (in the style of MPRNet's and lemniscate's train.py) that lists the
GPUs' ids with `[i for i in range(torch.cuda.device_count())]` and only reads them behind a
test (`if len(device_ids) > 1:`, `device_ids[0] if device_ids else None`): nothing here needs
a GPU but its hard-coded `.cuda()` calls, which are fixed."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

device_ids = [i for i in range(torch.cuda.device_count())]
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
if len(device_ids) > 1:
    model = nn.DataParallel(model, device_ids=device_ids)
main_gpu = device_ids[0] if device_ids else None
print("main GPU:", main_gpu)
model = model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    inputs = torch.randn(4, 8).to(device)
    targets = torch.randint(0, 3, (4,)).to(device)
    loss = nn.functional.cross_entropy(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

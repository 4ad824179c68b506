import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Linear(8, 2).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
train_loader = DataLoader(TensorDataset(torch.randn(40, 8), torch.randint(0, 2, (40,))), batch_size=8, shuffle=True, pin_memory=True)

# Train for a fixed number of steps, restarting the loader when it runs out.
data_iter = iter(train_loader)
step = 0
while step < 12:
    try:
        inputs, labels = next(data_iter)
        inputs, labels = inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    except StopIteration:
        data_iter = iter(train_loader)
        continue
    loss = criterion(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    step += 1
print(step, loss.item())

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Linear(3, 2).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(TensorDataset(torch.randn(20, 3), torch.randint(0, 2, (20,))), batch_size=5, pin_memory=True)

for batch in train_loader:
    batch = [item.to(device, non_blocking=True) for item in batch]
    optimizer.zero_grad()
    output = model(batch[0])
    loss = criterion(output, batch[1])
    loss.backward()
    optimizer.step()
print(loss.item())

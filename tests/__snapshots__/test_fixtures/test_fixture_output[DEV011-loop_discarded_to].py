import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

features = torch.randn(64, 8)
targets = torch.randint(0, 3, (64,))
train_loader = DataLoader(TensorDataset(features, targets), batch_size=16, shuffle=True)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(2):
    for inputs, labels in train_loader:
        # "move" the batch (a no-op: Tensor.to returns a copy)
        inputs = inputs.to(device)
        labels = labels.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")

"""Small CNN on random 32x32 images.

The bug: the model is moved with a hard-coded `.cuda()` (the script dies on a laptop) and
the batches never leave the CPU ("Input type (torch.FloatTensor) and weight type
(torch.cuda.FloatTensor) should be the same" on a GPU machine).
"""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class SimpleCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Linear(8 * 16 * 16, num_classes)

    def forward(self, x):
        x = self.pool(torch.relu(self.conv1(x)))
        return self.fc(x.flatten(1))


images = torch.randn(128, 3, 32, 32)
labels = torch.randint(0, 10, (128,))
train_loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True)

model = SimpleCNN().cuda()
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    running = 0.0
    for inputs, targets in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch {epoch}: loss {running / len(train_loader):.3f}")

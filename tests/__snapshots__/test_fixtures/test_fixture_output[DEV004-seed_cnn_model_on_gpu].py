import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = x.view(x.size(0), -1)
        return self.fc(x)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = SmallCNN().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=1e-3)

images = torch.randn(48, 3, 16, 16)
classes = torch.randint(0, 10, (48,))
train_loader = DataLoader(TensorDataset(images, classes), batch_size=16, shuffle=True, pin_memory=True)

running_loss = 0.0
for batch_idx, (inputs, labels) in enumerate(train_loader, 1):
    inputs, labels = inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    # Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    running_loss += loss.item()
    if batch_idx % 2 == 0:
        print(f"[{batch_idx}] loss: {running_loss / batch_idx:.3f}")

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ConvClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6, 10)

    def forward(self, x):
        return self.fc(self.conv(x).mean(dim=(2, 3)))


model = ConvClassifier()
if torch.cuda.device_count() > 1:
    print("Using", torch.cuda.device_count(), "GPUs!")
    model = nn.DataParallel(model)
model.to(device)

criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(32, 3, 12, 12), torch.randint(0, 10, (32,))), batch_size=8, pin_memory=True)

for inputs, labels in loader:
    inputs, labels = inputs.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    # DataParallel scatters CPU inputs itself, but its outputs land on cuda:0 with the labels
    # still on the CPU.
    outputs = model(inputs)
    loss = criterion(outputs, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

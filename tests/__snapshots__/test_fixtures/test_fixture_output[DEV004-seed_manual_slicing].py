import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TinyConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4, 10)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


model = TinyConvNet().to(device)
if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

inputs = torch.randn(64, 3, 16, 16)
labels = torch.randint(0, 10, (64,))

batch_size = 16
for i in range(0, inputs.size(0), batch_size):
    input_batch = inputs[i:i + batch_size].to(device)
    label_batch = labels[i:i + batch_size].to(device)
    outputs = model(input_batch)
    loss = criterion(outputs, label_batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

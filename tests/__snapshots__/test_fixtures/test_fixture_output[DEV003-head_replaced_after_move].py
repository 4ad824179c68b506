"""Transfer learning: the new classification head is assigned after the model was moved."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8, 1000)

    def forward(self, x):
        return self.fc(self.features(x))


model = Backbone()
model = model.to(device)
for parameter in model.features.parameters():
    parameter.requires_grad = False
# replace the head for our 10 classes
model.fc = nn.Linear(8, 10).to(device)

optimizer = torch.optim.SGD(model.fc.parameters(), lr=0.01)
images = torch.randn(4, 3, 16, 16).to(device)
labels = torch.randint(0, 10, (4,)).to(device)
loss = nn.functional.cross_entropy(model(images), labels)
loss.backward()
optimizer.step()
print(loss.item())

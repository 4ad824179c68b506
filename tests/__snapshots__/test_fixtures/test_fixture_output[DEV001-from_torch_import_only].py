from torch import nn, optim, randn, randint
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
optimizer = optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.CrossEntropyLoss()

images = randn(16, 3, 8, 8).to(device)
labels = randint(0, 10, (16,)).to(device)
model.to(device)
for _ in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(images), labels)
    loss.backward()
    optimizer.step()

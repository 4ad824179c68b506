import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 1)).to(device)
# Adagrad allocates its `sum` state right here, next to the parameters
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)

x = torch.randn(10, 6).to(device)
for _ in range(3):
    optimizer.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
print(loss.item())

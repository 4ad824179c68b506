# a helper that forward calls makes a CPU tensor (DEV007, not DEV004: the batch is moved)
import torch
import torch.nn as nn


def position_bias(n):
    return torch.arange(n, dtype=torch.float32).unsqueeze(1) / n


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x) + position_bias(x.shape[0])  # BUG-LINE


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
net = Net().to(device)
print(net(torch.randn(3, 4).to(device)).shape)

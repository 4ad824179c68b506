# forward turns a NumPy array into a tensor with torch.from_numpy, which stays on the CPU
# (DEV007, not DEV004: the batch is moved; no function mode sees from_numpy)
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        bias = torch.from_numpy(np.ones((1, 4), dtype=np.float32))
        return self.fc(x) + bias  # BUG-LINE


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
net = Net().to(device)
print(net(torch.randn(3, 4).to(device)).shape)

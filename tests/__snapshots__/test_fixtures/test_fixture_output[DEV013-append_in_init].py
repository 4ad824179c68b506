# devfix: --unsafe-fixes
"""A conv stack built with .append in __init__, the way many tutorials start."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ConvStack(nn.Module):
    def __init__(self, channels=(1, 4, 8)):
        super().__init__()
        self.blocks = nn.ModuleList()
        for c_in, c_out in zip(channels[:-1], channels[1:]):
            self.blocks.append(nn.Conv2d(c_in, c_out, 3, padding=1))
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.pool(x).flatten(1)


model = ConvStack().to(device)
print(model(torch.randn(2, 1, 6, 6).to(device)).shape)

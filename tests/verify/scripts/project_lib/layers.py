import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, fixed=False):
        bias = torch.zeros(3, device=x.device) if fixed else torch.zeros(3)
        return self.fc(x) + bias  # BUG-LINE

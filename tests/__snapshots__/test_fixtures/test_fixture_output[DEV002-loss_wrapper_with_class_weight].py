"""The same loss wrapper given a class-weight tensor: the weight becomes the loss's own buffer,
so `.cuda()` copies it and fails on a CPU-only machine."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CrossEntropyLoss2d(nn.Module):
    def __init__(self, weight=None, ignore_index=255):
        super(CrossEntropyLoss2d, self).__init__()
        self.nll_loss = nn.NLLLoss2d(weight, ignore_index=ignore_index)

    def forward(self, inputs, targets):
        return self.nll_loss(F.log_softmax(inputs, dim=1), targets)


class_weight = torch.tensor([1.0, 2.0, 0.5])
criterion = CrossEntropyLoss2d(class_weight).to(device)
scores = torch.randn(2, 3, 4, 4).to(device)
labels = torch.randint(0, 3, (2, 4, 4)).to(device)
print(criterion(scores, labels).item())

# multi-label targets built in forward with zeros(...).scatter_ and no device=
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, n_classes=5):
        super().__init__()
        self.n_classes = n_classes
        self.fc = nn.Linear(4, n_classes)

    def forward(self, x, labels):
        target = torch.zeros(x.size(0), self.n_classes).scatter_(1, labels.unsqueeze(1), 1.0)  # BUG-LINE
        return F.binary_cross_entropy_with_logits(self.fc(x), target)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Tagger().to(device)
x, labels = torch.randn(8, 4).to(device), torch.randint(0, 5, (8,)).to(device)
loss = model(x, labels)
loss.backward()
print(loss.item())

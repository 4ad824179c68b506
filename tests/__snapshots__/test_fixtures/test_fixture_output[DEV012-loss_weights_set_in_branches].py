"""Issue 13, shape 8, in one file: loss modules whose class weights are plain tensor attributes,
set in `if/elif/else` branches or a conditional expression of `__init__` (the focal losses of
many detection repositories). `criterion.to(device)` leaves them on the CPU, and indexing them
with the labels on the GPU fails: they become non-persistent buffers."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, alpha=None, gamma=2.0):
        super().__init__()
        self.gamma = gamma
        if isinstance(alpha, (float, int)):
            self.register_buffer("alpha", torch.tensor([alpha, 1 - alpha]), persistent=False)
        elif isinstance(alpha, (list, tuple)):
            self.register_buffer("alpha", torch.tensor(alpha), persistent=False)
        else:
            self.alpha = None

    def forward(self, logits, target):
        ce = F.cross_entropy(logits, target, reduction="none")
        loss = (1 - torch.exp(-ce)) ** self.gamma * ce
        if self.alpha is not None:
            loss = self.alpha[target] * loss
        return loss.mean()


class WeightedCE(nn.Module):
    def __init__(self, weights=None, smoothing=0.0):
        super().__init__()
        self.register_buffer("weights", torch.tensor(weights, dtype=torch.float32) if weights is not None else None, persistent=False)
        self.smoothing = smoothing

    def forward(self, logits, target):
        return F.cross_entropy(logits, target, weight=self.weights, label_smoothing=self.smoothing)



device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(6, 3).to(device)
focal = FocalLoss(alpha=[0.2, 0.3, 0.5]).to(device)
weighted = WeightedCE(weights=[1.0, 2.0, 1.0]).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 6, device=device)
    y = torch.randint(0, 3, (8,), device=device)
    logits = model(x)
    loss = focal(logits, y) + weighted(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("loss", loss.item())

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

class_weights = torch.tensor([0.2, 0.3, 0.5])
model = nn.Linear(12, 3).to(device)
criterion = nn.CrossEntropyLoss(weight=class_weights).to(device)
bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0])).to(device)

x = torch.randn(6, 12).to(device)
labels = torch.randint(0, 3, (6,)).to(device)
logits = model(x)
loss = criterion(logits, labels) + bce(logits[:, :1], (labels[:, None] == 0).float())
print(loss.item())

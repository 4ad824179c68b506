import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

class_weights = torch.tensor([1.0, 2.0, 0.5])
class_weights = class_weights.to(device)

model = nn.Linear(5, 3).to(device)
inputs = torch.randn(10, 5).to(device)
labels = torch.randint(0, 3, (10,)).to(device)
loss = nn.functional.cross_entropy(model(inputs), labels, weight=class_weights)
print(loss.item())

"""Evaluation that collects predictions as NumPy arrays: fine on a laptop, crashes on a GPU."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3)).to(device)
loader = DataLoader(TensorDataset(torch.randn(12, 10), torch.randint(0, 3, (12,))), batch_size=4)

all_preds, all_probs, all_labels = [], [], []
model.eval()
with torch.no_grad():
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        outputs = model(inputs)
        _, predicted = torch.max(outputs, 1)
        probs = torch.softmax(outputs, dim=1)
        all_preds.append(predicted.detach().cpu().numpy())
        all_probs.append(probs.detach().cpu().numpy())
        all_labels.append(labels.detach().cpu().numpy())

preds = np.concatenate(all_preds)
accuracy = float(np.mean(preds == np.concatenate(all_labels)))
print(accuracy, np.concatenate(all_probs).shape)

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class IndexedSamples(Dataset):
    """Features, a label, and the sample's row number (for error analysis)."""

    def __init__(self):
        self.x = torch.randn(20, 4)
        self.y = torch.randint(0, 2, (20,))

    def __len__(self):
        return 20

    def __getitem__(self, i):
        return self.x[i], self.y[i], i


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(IndexedSamples(), batch_size=5, pin_memory=True)

wrong_rows = []
model.eval()
with torch.no_grad():
    for features, label, row in loader:
        features, label = features.to(device, non_blocking=True), label.to(device, non_blocking=True)
        logits = model(features)
        loss = criterion(logits, label)
        wrong = (logits.argmax(1) != label).cpu().numpy()
        wrong_rows.extend(np.asarray(row)[wrong].tolist())
        print(f"rows {row.tolist()} loss {loss.item():.3f}")
print(sorted(wrong_rows))

# Dataset moving to the device in __getitem__ under worker processes
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Points(Dataset):
    def __init__(self):
        self.x = torch.randn(16, 4)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i].to(device)  # BUG-LINE


if __name__ == "__main__":
    model = nn.Linear(4, 1).to(device)
    loader = DataLoader(Points(), batch_size=4, num_workers=2)
    for xb in loader:
        print(model(xb).shape)

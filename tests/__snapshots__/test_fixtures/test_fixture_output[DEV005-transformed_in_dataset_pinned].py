import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Images(Dataset):
    def __init__(self, pixels, labels):
        # moved, then scaled on the device: devfix cannot be sure it may hoist this
        self.pixels = pixels.to(device).float() / 255.0
        self.labels = labels.to(device).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.pixels[i], self.labels[i]


model = nn.Sequential(nn.Flatten(), nn.Linear(16, 4)).to(device)
loader = DataLoader(Images(torch.randint(0, 256, (20, 4, 4)), torch.randint(0, 4, (20,))), batch_size=5)
for x, y in loader:
    print(nn.functional.cross_entropy(model(x), y).item())

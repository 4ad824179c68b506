# devfix: --dataset-placement=device
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Windows(Dataset):
    """Sliding windows over a long signal; each window predicts the next value."""

    def __init__(self, signal, width=8):
        self.signal = signal
        self.width = width

    def __len__(self):
        return len(self.signal) - self.width

    def __getitem__(self, i):
        window = self.signal[i:i + self.width]
        target = self.signal[i + self.width]
        return window, target.unsqueeze(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(Windows(torch.sin(torch.linspace(0, 12, 72))), batch_size=16, shuffle=True, num_workers=4)
    for epoch in range(2):
        for window, target in loader:
            window, target = window.to(device), target.to(device)
            loss = nn.functional.mse_loss(model(window), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())

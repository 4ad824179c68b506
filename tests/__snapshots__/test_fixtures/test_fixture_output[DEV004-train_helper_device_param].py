import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def train(model, loader, optimizer, device):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device, non_blocking=True), target.to(device, non_blocking=True)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(10, 4), nn.LogSoftmax(dim=1)).to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    loader = DataLoader(TensorDataset(torch.randn(32, 10), torch.randint(0, 4, (32,))), batch_size=8, pin_memory=True)
    for epoch in range(1, 3):
        print(epoch, train(model, loader, optimizer, device))


if __name__ == "__main__":
    main()

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, train_loader, val_loader):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(x), y)
            loss.backward()
            self.optimizer.step()
        return loss.item()

    def validate(self):
        self.model.eval()
        total = 0.0
        with torch.no_grad():
            for x, y in self.val_loader:
                x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
                total += self.criterion(self.model(x), y).item()
        return total / len(self.val_loader)


data = TensorDataset(torch.randn(24, 5), torch.randn(24, 1))
trainer = Trainer(nn.Linear(5, 1), DataLoader(data, batch_size=8, pin_memory=True), DataLoader(data, batch_size=12, pin_memory=True))
for epoch in range(2):
    print(trainer.train_epoch(), trainer.validate())

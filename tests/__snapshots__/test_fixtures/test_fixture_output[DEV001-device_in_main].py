import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.fc(x)


def main():
    """Train a linear classifier on random data."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Classifier(20, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(64, 20).to(device)
    y = torch.randint(0, 4, (64,)).to(device)
    for epoch in range(3):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()

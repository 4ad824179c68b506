# The same solver without its `.to(self.device)`: whichever branch built the generator,
# it stays on the CPU while its inputs are sent to the GPU. Both constructions get the move.
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, c_dim):
        super().__init__()
        self.main = nn.Linear(8 + c_dim, 8)

    def forward(self, x, c):
        return self.main(torch.cat([x, c], dim=1))


class Solver:
    def __init__(self, dataset):
        self.dataset = dataset
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.build_model()

    def build_model(self):
        if self.dataset in ["CelebA", "RaFD"]:
            self.G = Generator(5).to(self.device)
        elif self.dataset in ["Both"]:
            self.G = Generator(10).to(self.device)
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-4)

    def train(self, steps):
        c_dim = 5 if self.dataset != "Both" else 10
        for _ in range(steps):
            x = torch.randn(4, 8).to(self.device)
            c = torch.zeros(4, c_dim).to(self.device)
            loss = self.G(x, c).pow(2).mean()
            self.g_optimizer.zero_grad()
            loss.backward()
            self.g_optimizer.step()
        return loss.item()


if __name__ == "__main__":
    print(Solver("CelebA").train(2))
    print(Solver("Both").train(2))

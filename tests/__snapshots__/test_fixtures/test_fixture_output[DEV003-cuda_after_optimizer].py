import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, vocab_size=100, dim=16, num_tags=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)
        self.proj = nn.Linear(dim, num_tags)

    def forward(self, tokens):
        return self.proj(self.embedding(tokens))


def build(args_lr=0.1):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Tagger().to(device)
    optimizer = torch.optim.Adagrad(model.parameters(), lr=args_lr)
    # moved after the optimizer: Adagrad's accumulators were already made on the CPU
    tokens = torch.randint(0, 100, (8, 5)).to(device)
    tags = torch.randint(0, 4, (8, 5)).to(device)
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(tokens).flatten(0, 1), tags.flatten())
        loss.backward()
        optimizer.step()
    print(loss.item())


build()

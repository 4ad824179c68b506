import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class TinyDecoder(nn.Module):
    def __init__(self, vocab=20, dim=8, max_len=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, positions, mask):
        h = self.tok(tokens) + self.pos(positions)
        h, _ = self.attn(h, h, h, attn_mask=mask)
        return self.out(h)


def train(model, loader, optimizer, device):
    model.train()
    for tokens, in loader:
        tokens = tokens.to(device)
        seq_len = tokens.size(1)
        positions = torch.arange(seq_len, device=device).unsqueeze(0).expand_as(tokens)
        mask = torch.triu(torch.ones(seq_len, seq_len, device=device), diagonal=1).bool()
        logits = model(tokens[:, :-1], positions[:, :-1], mask[:-1, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = TinyDecoder().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(TensorDataset(torch.randint(0, 20, (12, 9))), batch_size=4)
print(train(model, loader, optimizer, device))

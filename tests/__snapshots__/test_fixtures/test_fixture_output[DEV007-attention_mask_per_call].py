"""Masks, positions and constants built per call inside forward."""
import math

import torch
from torch import nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab=20, d_model=8, max_len=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.attn = nn.MultiheadAttention(d_model, num_heads=2, batch_first=True)
        self.head = nn.Linear(d_model, vocab)
        self.d_model = d_model

    def forward(self, idx):
        b, t = idx.size()
        positions = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.tok(idx) * torch.sqrt(torch.tensor(float(self.d_model))) + self.pos(positions)
        causal = torch.triu(torch.full((t, t), float("-inf"), device=idx.device), diagonal=1)
        y, _ = self.attn(x, x, x, attn_mask=causal)
        return self.head(y + torch.tensor([0.5], device=idx.device))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = TinyDecoder().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
idx = torch.randint(0, 20, (2, 6)).to(device)
logits = model(idx)
loss = nn.functional.cross_entropy(logits.view(-1, 20), idx.view(-1))
loss.backward()
optimizer.step()
print(loss.item(), math.isfinite(loss.item()))

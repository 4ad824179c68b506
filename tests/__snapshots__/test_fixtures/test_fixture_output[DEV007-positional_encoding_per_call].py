"""Sinusoidal positional encodings computed per call in forward (a common pattern in
transformer tutorials; on a GPU the table is built on the CPU and the addition fails with
"Expected all tensors to be on the same device")."""
import math

import torch
import torch.nn as nn


class SinusoidalEncoder(nn.Module):
    def __init__(self, d_model=8, vocab=16):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab, d_model)
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        seq_len = tokens.size(1)
        position = torch.arange(seq_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, self.d_model, 2).float() * (-math.log(10000.0) / self.d_model))
        pe = torch.zeros(seq_len, self.d_model, device=tokens.device)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        return self.proj(x + pe)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = SinusoidalEncoder().to(device)
tokens = torch.randint(0, 16, (2, 5)).to(device)
logits = model(tokens)
loss = nn.functional.cross_entropy(logits.reshape(-1, 16), tokens.reshape(-1))
loss.backward()
print(loss.item())

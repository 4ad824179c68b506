"""A Transformer positional encoding whose table does not follow model.to(device) (the fix
registers it as a non-persistent buffer, as antoniorv6/SMT PR #6 did for its encodings)."""
import math

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1), persistent=False)

    def forward(self, x):
        x = x + self.pe[: x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken=30, d_model=8):
        super().__init__()
        self.embed = nn.Embedding(ntoken, d_model)
        self.pos_encoder = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=16)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)
        self.decoder = nn.Linear(d_model, ntoken)

    def forward(self, src):
        return self.decoder(self.encoder(self.pos_encoder(self.embed(src))))


model = TransformerModel().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
src = torch.randint(0, 30, (6, 2)).to(device)
output = model(src)
loss = criterion(output.view(-1, 30), src.view(-1))
loss.backward()
optimizer.step()
print(loss.item())

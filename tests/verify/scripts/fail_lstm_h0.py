# LSTM hidden state created in forward without device=
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        h0 = torch.zeros(1, x.size(0), 8)
        c0 = torch.zeros(1, x.size(0), 8)
        out, _ = self.lstm(x, (h0, c0))  # BUG-LINE
        return self.head(out[:, -1])


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Tagger().to(device)
x = torch.randn(2, 5, 4).to(device)
print(model(x).shape)

"""An LSTM tagger whose hidden state is created on the CPU in forward, and whose
predictions are turned into NumPy straight from the model output."""
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=16, hidden=32, tags=5):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, tags)

    def forward(self, tokens):
        h0 = torch.zeros(1, tokens.size(0), self.hidden)
        c0 = torch.zeros(1, tokens.size(0), self.hidden)
        states, _ = self.lstm(self.embed(tokens), (h0, c0))
        return self.out(states)


model = Tagger().to(device)
tokens = torch.randint(0, 50, (4, 7)).to(device)
tags = torch.randint(0, 5, (4, 7)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    scores = model(tokens)
    loss = nn.functional.cross_entropy(scores.reshape(-1, 5), tags.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
predicted = scores.argmax(-1).numpy()
print("accuracy:", np.mean(predicted == tags.cpu().numpy()))

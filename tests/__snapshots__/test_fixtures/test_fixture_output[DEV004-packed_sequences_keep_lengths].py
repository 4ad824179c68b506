import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, Dataset


class PaddedSentences(Dataset):
    """Padded token ids, a label, and the true length of each sentence."""

    def __init__(self, n=24, max_len=7):
        self.tokens = torch.randint(1, 50, (n, max_len))
        self.labels = torch.randint(0, 2, (n,))
        self.lengths = torch.randint(2, max_len + 1, (n,))

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.tokens[index], self.labels[index], self.lengths[index]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.rnn = nn.GRU(16, 16, batch_first=True)
        self.head = nn.Linear(16, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, hidden = self.rnn(packed)
        return self.head(hidden[-1])


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Classifier().to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters())
loader = DataLoader(PaddedSentences(), batch_size=6, shuffle=True, pin_memory=True)

for tokens, labels, lengths in loader:
    tokens, labels = tokens.to(device, non_blocking=True), labels.to(device, non_blocking=True)
    # lengths must stay on the CPU: pack_padded_sequence rejects CUDA lengths
    logits = model(tokens, lengths)
    loss = criterion(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

# variable-length batches: data on the device, lengths on the CPU, as torch requires
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
encoder = nn.LSTM(3, 6, batch_first=True).to(device)
head = nn.Linear(6, 2).to(device)
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
padded = torch.randn(4, 7, 3).to(device)
lengths = torch.tensor([7, 3, 5, 2])
for _ in range(3):
    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    out, _ = encoder(packed)
    unpacked, _ = pad_packed_sequence(out, batch_first=True)
    loss = head(unpacked).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

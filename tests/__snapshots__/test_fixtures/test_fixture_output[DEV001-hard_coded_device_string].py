import torch
from torch import nn

DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'

encoder = nn.GRU(input_size=4, hidden_size=8, batch_first=True).to(DEVICE)
sequence = torch.randn(2, 5, 4).to(DEVICE)
output, hidden = encoder(sequence)
print(output.shape, hidden.shape)

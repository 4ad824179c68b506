# pack_padded_sequence with its lengths moved to the GPU (a wrong "move everything" fix)
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
encoder = nn.GRU(3, 6, batch_first=True).to(device)
padded = torch.randn(3, 5, 3).to(device)
lengths = torch.tensor([5, 4, 2]).to(device)
packed = pack_padded_sequence(padded, lengths, batch_first=True)  # BUG-LINE
out, _ = encoder(packed)
print(pad_packed_sequence(out, batch_first=True)[0].shape)

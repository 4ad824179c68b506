"""A question-answering encoder (in the shape of BiDAF's LSTM wrapper) that takes `(x, x_len)`,
sorts the lengths with `torch.sort` and packs: the batches come from an iterator that puts
them on the GPU, lengths included, and `pack_padded_sequence` wants its lengths on the CPU."""
import torch
import torch.nn as nn


class LSTM(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.rnn = nn.LSTM(input_size, hidden_size, batch_first=True)

    def forward(self, x):
        x, x_len = x
        x_len_sorted, x_idx = torch.sort(x_len, descending=True)
        x_sorted = x.index_select(dim=0, index=x_idx)
        _, x_ori_idx = torch.sort(x_idx)
        x_packed = nn.utils.rnn.pack_padded_sequence(x_sorted, x_len_sorted.cpu(), batch_first=True)
        x_packed, (h, c) = self.rnn(x_packed)
        x = nn.utils.rnn.pad_packed_sequence(x_packed, batch_first=True)[0]
        return x.index_select(dim=0, index=x_ori_idx)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
encoder = LSTM(8, 16).to(device)
words = torch.randn(3, 5, 8).to(device)
lengths = torch.tensor([5, 2, 4]).to(device)
print(encoder((words, lengths)).shape)

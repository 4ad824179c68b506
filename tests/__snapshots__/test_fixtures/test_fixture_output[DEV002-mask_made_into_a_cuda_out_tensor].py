# FastSpeech's utils.get_mask_from_lengths: `torch.arange(..., out=torch.cuda.LongTensor(n))`
# writes its result into a CUDA tensor, so the mask is made on the GPU, where the model's
# outputs are: no DEV007 or DEV008 on it. The CUDA-only tensor type and the `.cuda()` calls
# are DEV002's, and after them the script runs on either kind of machine.
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_mask_from_lengths(lengths, max_len):
    ids = torch.arange(0, max_len, out=(torch.cuda.LongTensor if torch.cuda.is_available() else torch.LongTensor)(max_len))
    return (ids < lengths.unsqueeze(1)).bool()


class Decoder(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def forward(self, x, lengths):
        mask = ~get_mask_from_lengths(lengths, x.size(1))
        return self.linear(x).masked_fill(mask.unsqueeze(-1), 0.0)


model = Decoder().to(device)
print(model(torch.randn(2, 3, 4).to(device), torch.tensor([3, 2]).to(device)).shape)

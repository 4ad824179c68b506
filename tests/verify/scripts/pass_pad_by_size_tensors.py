"""F.pad and F.interpolate read their sizes as Python numbers: a size kept as a CPU tensor
(a U-Net's `torch.tensor([diff])`) is fine beside input on the GPU."""
import torch
import torch.nn.functional as F

x = torch.randn(1, 2, 5, 5).cuda()
diff = torch.tensor([6])
padded = F.pad(x, [diff // 2, diff - diff // 2, diff // 2, diff - diff // 2])
print(padded.shape, F.interpolate(padded, size=[torch.tensor(8), torch.tensor(8)]).shape)

# The same GAN idiom with one batch forgotten: built on the CPU, it meets the GPU model
import torch
import torch.nn as nn

cuda = torch.cuda.is_available()
netD = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
if cuda:
    netD.cuda()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
criterion = nn.BCELoss()
data = torch.randn(32, 4)
for i in range(0, 32, 8):
    real = data[i:i + 8]
    valid = Tensor(real.size(0), 1).fill_(1.0)
    err = criterion(netD(real), valid)  # BUG-LINE
    err.backward()

# PyTorch-GAN style: `Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`, used
# both as a constructor (`Tensor(n, 1)`) and to move batches (`x.type(Tensor)`)
import numpy as np
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
    real = data[i:i + 8].type(Tensor)
    valid = Tensor(real.size(0), 1).fill_(1.0)
    noise = Tensor(np.random.normal(0, 1, (real.size(0), 4)))
    err = criterion(netD(real), valid) + criterion(netD(noise), valid)
    err.backward()
print("ok")

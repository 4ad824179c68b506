# DCGAN style loop: labels made with torch.full(..., device=device)
import torch
import torch.nn as nn
import torch.optim as optim

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
nz = 8
netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh()).to(device)
netD = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid()).to(device)
criterion = nn.BCELoss()
optD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
fixed_noise = torch.randn(4, nz, device=device)
real_label, fake_label = 1.0, 0.0
data = torch.randn(64, 4) * 0.5 + 1.0
for epoch in range(2):
    for i in range(0, 64, 16):
        real = data[i:i + 16].to(device)
        b = real.size(0)
        label = torch.full((b,), real_label, dtype=torch.float, device=device)
        netD.zero_grad()
        errD_real = criterion(netD(real).view(-1), label)
        errD_real.backward()
        noise = torch.randn(b, nz, device=device)
        fake = netG(noise)
        label.fill_(fake_label)
        errD_fake = criterion(netD(fake.detach()).view(-1), label)
        errD_fake.backward()
        optD.step()
        netG.zero_grad()
        label.fill_(real_label)
        errG = criterion(netD(fake).view(-1), label)
        errG.backward()
        optG.step()
with torch.no_grad():
    print(netG(fixed_noise).detach().cpu().numpy().shape)

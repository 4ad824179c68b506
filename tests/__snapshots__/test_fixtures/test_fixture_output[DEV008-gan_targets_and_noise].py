import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
latent_dim = 8

generator = nn.Sequential(nn.Linear(latent_dim, 16), nn.Tanh()).to(device)
discriminator = nn.Sequential(nn.Linear(16, 1)).to(device)
adversarial_loss = nn.BCEWithLogitsLoss()
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4)
dataloader = DataLoader(TensorDataset(torch.randn(32, 16)), batch_size=8, shuffle=True)

for epoch in range(2):
    for (real,) in dataloader:
        real = real.to(device)
        batch_size = real.size(0)
        valid = torch.ones(batch_size, 1, device=device)
        fake = torch.zeros(batch_size, 1, device=device)

        # generator step
        z = torch.randn(batch_size, latent_dim, device=device)
        generated = generator(z)
        g_loss = adversarial_loss(discriminator(generated), valid)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()

        # discriminator step
        real_loss = adversarial_loss(discriminator(real), valid)
        fake_loss = adversarial_loss(discriminator(generated.detach()), fake)
        d_loss = (real_loss + fake_loss) / 2
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
    print(epoch, g_loss.item(), d_loss.item())

"""rosinality/denoising-diffusion-pytorch's `generate.py`: the sampling loop takes the device
as its fourth parameter and moves each step's timesteps there; the script hard-codes "cuda"
for the model, the noise, and, by position, the loop. All of it dies without a GPU."""
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TinyUNet(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.time = nn.Embedding(1000, channels)

    def forward(self, x, t):
        return self.conv(x) + self.time(t)[:, :, None, None]


class GaussianDiffusion(nn.Module):
    def __init__(self, steps=4):
        super().__init__()
        self.num_timesteps = steps
        self.register_buffer("betas", torch.linspace(1e-4, 0.02, steps))

    def p_sample(self, model, img, t, noise_fn=torch.randn):
        beta = self.betas[t][:, None, None, None]
        return (img - beta * model(img, t)) / (1 - beta).sqrt() + beta.sqrt() * noise_fn(img.shape, device=img.device)


@torch.no_grad()
def p_sample_loop(self, model, noise, device, noise_fn=torch.randn, capture_every=1000):
    img = noise
    imgs = []
    for i in reversed(range(self.num_timesteps)):
        img = self.p_sample(model, img, torch.full((img.shape[0],), i, dtype=torch.int64).to(device), noise_fn=noise_fn)
        if i % capture_every == 0:
            imgs.append(img)
    imgs.append(img)
    return imgs


if __name__ == "__main__":
    model = TinyUNet()
    model = model.to(device)
    diffusion = GaussianDiffusion().to(device)
    noise = torch.randn([2, 3, 8, 8], device=device)
    imgs = p_sample_loop(diffusion, model, noise, device, capture_every=2)
    print(len(imgs), imgs[-1].shape)

"""A vocoder's training step (in the style of VocGAN's and HiFi-GAN's STFT loss): the loss
moves its window with `window.to(x.get_device())`, the index of the GPU that holds `x`, which
is -1 for a CPU tensor and refused by `.to()` ("Device index must not be negative"). It
becomes `window.to(x.device)`, where `x` is on either kind of machine, so that with the
step's `.cuda()` calls rewritten the whole step runs on a CPU."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def stft_loss(x, y, window, fft_size=16):
    window = window.to(x.device)
    spec_x = torch.stft(x, fft_size, window=window, return_complex=True).abs()
    spec_y = torch.stft(y, fft_size, window=window, return_complex=True).abs()
    return (spec_x - spec_y).abs().mean()


generator = nn.Sequential(nn.Linear(64, 64), nn.Tanh()).to(device)
optimizer = torch.optim.Adam(generator.parameters())
window = torch.hann_window(16)
for _ in range(2):
    audio = torch.randn(2, 64).to(device)
    loss = stft_loss(generator(audio), audio, window)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

"""A MelGAN-style discriminator whose convolutions are weight-normalised inside an
`nn.ModuleList`: it holds parameters, so its hard-coded `.cuda()` fails on a CPU-only machine
like the batches' (`weight_norm` returns the layer it was given)."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Sequential(nn.ReflectionPad1d(1), nn.utils.parametrizations.weight_norm(nn.Conv1d(1, 4, 3))),
            nn.utils.parametrizations.weight_norm(nn.Conv1d(4, 1, 3)),
        ])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


model_d = Discriminator().to(device)
audio = torch.randn(2, 1, 16).to(device)
print(model_d(audio).shape)

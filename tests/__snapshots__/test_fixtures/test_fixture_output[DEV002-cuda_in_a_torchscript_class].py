# devfix: no-run (the scripted filter's .cuda() is reported for a fix by hand: the script still needs a GPU)
"""ASL's TResNet blurs before it downsamples with `DownsampleJIT`, a class compiled by
`@torch.jit.script` when the module is imported. Its filter is made with a hard-coded
`.cuda()`: a CPU-only crash whenever the scripted path is built. A device declaration cannot go
there (TorchScript does not compile `torch.cuda.is_available()` in it), so the line is reported
for a fix by hand; the scripted class compiles as before. The script's own `.cuda()` calls are
fixed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@torch.jit.script
class DownsampleJIT(object):
    def __init__(self, channels: int = 0):
        self.channels = channels
        a = torch.tensor([1.0, 2.0, 1.0])
        filt = (a[:, None] * a[None, :]).clone().detach()
        filt = filt / torch.sum(filt)
        self.filt = filt[None, None, :, :].repeat((self.channels, 1, 1, 1)).cuda()

    def __call__(self, input: torch.Tensor):
        input_pad = F.pad(input, (1, 1, 1, 1), "reflect")
        return F.conv2d(input_pad, self.filt, stride=2, padding=0, groups=input.shape[1])


class Downsample(nn.Module):
    def __init__(self, channels):
        super().__init__()
        a = torch.tensor([1.0, 2.0, 1.0])
        filt = a[:, None] * a[None, :]
        self.register_buffer("filt", (filt / filt.sum())[None, None].repeat((channels, 1, 1, 1)))

    def forward(self, input):
        input_pad = F.pad(input, (1, 1, 1, 1), "reflect")
        return F.conv2d(input_pad, self.filt, stride=2, padding=0, groups=input.shape[1])


class AntiAliasDownsampleLayer(nn.Module):
    def __init__(self, channels, remove_model_jit=False):
        super().__init__()
        self.op = Downsample(channels) if remove_model_jit else DownsampleJIT(channels)

    def forward(self, x):
        return self.op(x)


if __name__ == "__main__":
    layer = AntiAliasDownsampleLayer(3).to(device)
    print(layer(torch.randn(1, 3, 8, 8).to(device)).shape)

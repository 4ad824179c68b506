"""Modelled on an LPIPS implementation vendored by a public encoder repository: `LinLayers`
derives from `nn.ModuleList` and hands its 1x1 convolutions to `super().__init__`, so it
holds weights even though its `__init__` assigns no layer of its own. `.to("cuda")` on it
copies them to a GPU, which a CPU-only machine lacks."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class LinLayers(nn.ModuleList):
    def __init__(self, n_channels_list):
        super().__init__([nn.Sequential(nn.Identity(), nn.Conv2d(nc, 1, 1, 1, 0, bias=False)) for nc in n_channels_list])
        for param in self.parameters():
            param.requires_grad = False


class LPIPS(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(3, 4, 3, padding=1).to(device)
        self.lin = LinLayers([4]).to(device)

    def forward(self, x, y):
        diff = (self.net(x) - self.net(y)) ** 2
        return sum(layer(diff).mean() for layer in self.lin)


if __name__ == "__main__":
    loss = LPIPS()
    x = torch.rand(2, 3, 8, 8).to(device)
    print(loss(x, torch.rand(2, 3, 8, 8).to(device)).item())

"""A feature-extraction script (self-critical.pytorch's scripts/prepro_feats.py): the backbone is
picked by name (`getattr(zoo, name)()`, whose class devfix cannot see) and wrapped in a module
that keeps it as `self.net` and calls its layers. The wrapper may hold weights, so its
`.cuda()` crashes a CPU-only machine like the images' does: both use the device."""
import types

import torch
import torch.nn as nn

zoo = types.SimpleNamespace(
    tiny=lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2)),
)


class FeatureExtractor(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, image):
        features = self.net(image.unsqueeze(0))
        return features.mean(dim=(2, 3)).squeeze(0), features.squeeze(0)


def main(model_name="tiny", count=3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    extractor = FeatureExtractor(getattr(zoo, model_name)())
    extractor.to(device)
    extractor.eval()
    for _ in range(count):
        image = torch.rand(3, 16, 16).to(device)
        with torch.no_grad():
            fc, att = extractor(image)
        print(fc.shape, att.shape)


if __name__ == "__main__":
    main()

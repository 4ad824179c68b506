"""A speech pipeline class (in the style of textlesslib's `examples/gslm/sample.py`): its
constructor sets `self.device = torch.device("cuda")` and moves its parts with `.cuda()`. The
attribute falls back to the CPU and the `.cuda()` calls use it, so the pipeline runs on a
CPU-only machine too."""
import torch
import torch.nn as nn


class Pipeline:
    def __init__(self, width):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.encoder = nn.Sequential(nn.Linear(width, width), nn.Tanh()).to(self.device)
        self.vocoder = nn.Linear(width, 2 * width).to(self.device)

    def __call__(self, features):
        units = self.encoder(features.to(self.device))
        return self.vocoder(units)


if __name__ == "__main__":
    pipeline = Pipeline(4)
    print(pipeline(torch.randn(3, 4)).shape)

# devfix: no-run  (needs torchvision)
"""A depth-estimation evaluation script (monodepth2's evaluate_depth.py): the encoder wraps a
torchvision ResNet picked from a dict of factories, or a subclass of torchvision's `ResNet`.
Both hold weights, so `encoder.cuda()` crashes a CPU-only machine like the decoder's does, and
all three hard-coded moves are fixed together (fixing only the decoder's would leave the crash)."""
import torch
import torch.nn as nn
from torchvision import models


class ResNetMultiImageInput(models.ResNet):
    def __init__(self, block, layers, num_input_images=1):
        super().__init__(block, layers)
        self.conv1 = nn.Conv2d(num_input_images * 3, 64, kernel_size=7, stride=2, padding=3, bias=False)


class ResnetEncoder(nn.Module):
    def __init__(self, num_layers, num_input_images=1):
        super().__init__()
        resnets = {18: models.resnet18, 34: models.resnet34, 50: models.resnet50}
        if num_input_images > 1:
            self.encoder = ResNetMultiImageInput(models.resnet.BasicBlock, [2, 2, 2, 2], num_input_images)
        else:
            self.encoder = resnets[num_layers]()

    def forward(self, image):
        x = self.encoder.relu(self.encoder.bn1(self.encoder.conv1(image)))
        return self.encoder.layer1(self.encoder.maxpool(x))


class DepthDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(64, 1, 3, padding=1)

    def forward(self, features):
        return torch.sigmoid(self.head(features))


def evaluate(images):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = ResnetEncoder(18)
    depth_decoder = DepthDecoder()
    encoder.to(device)
    encoder.eval()
    depth_decoder.to(device)
    depth_decoder.eval()
    predictions = []
    with torch.no_grad():
        for image in images:
            disparity = depth_decoder(encoder(image.to(device)))
            predictions.append(disparity.cpu().numpy())
    return predictions


if __name__ == "__main__":
    print(len(evaluate([torch.randn(1, 3, 64, 64) for _ in range(2)])))

"""An evaluation script whose function is called `test_voc` (modelled on a public SSD
repository's `test.py`): the script calls it from its `__main__` block, so it is no pytest
test loading the file it wrote itself. It loads the released weights, trained on a GPU,
and a CPU-only machine needs `map_location` for them."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--trained_model", default="")
args = parser.parse_args([])

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_detector():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 1))


def released_weights():
    """Stands in for the weights the authors trained and published (saved on a GPU)."""
    path = os.path.join(tempfile.mkdtemp(), "ssd300_voc.pth")
    torch.save(build_detector().to(device).state_dict(), path)
    return path


def test_net(net, images):
    with torch.no_grad():
        return net(images.to(device)).argmax(dim=1)


def test_voc():
    net = build_detector()
    net.load_state_dict(torch.load(args.trained_model, map_location=device))
    net.eval()
    net = net.to(device)
    print(test_net(net, torch.randn(2, 3, 8, 8)).shape)


if __name__ == "__main__":
    args.trained_model = args.trained_model or released_weights()
    test_voc()

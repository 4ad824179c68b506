"""A segmentation test script (in the style of CLIP-Driven-Universal-Model's `test.py`): it
declares a `--device` option with no default that nothing sets, so `args.device` is None unless
the command line gives one, and `model.to(None)` moves nothing. The fix for `model.cuda()`
declares a device of its own instead of using that option."""
import argparse

import torch
import torch.nn as nn


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    parser = argparse.ArgumentParser()
    parser.add_argument("--device")
    parser.add_argument("--batch_size", type=int, default=2)
    args = parser.parse_args([])
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 1))
    model.to(device)
    model.eval()
    with torch.no_grad():
        image = torch.randn(args.batch_size, 1, 8, 8).to(device)
        print(model(image).argmax(1).shape)


if __name__ == "__main__":
    main()

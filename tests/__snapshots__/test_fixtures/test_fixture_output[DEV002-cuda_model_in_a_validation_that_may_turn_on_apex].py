"""Modelled on a public image-model validation script (timm's `validate.py` style): the
function sets `args.apex_amp = True` only where `--amp` is given and apex is installed, so
`amp.initialize` (GPU code) runs on some runs only. Every other run still moves the model
and the batches with a hard-coded `.cuda()`, which crashes on a CPU-only machine."""
import argparse
from contextlib import suppress

import torch
import torch.nn as nn

try:
    from apex import amp

    has_apex = True
except ImportError:
    has_apex = False

has_native_amp = hasattr(torch.cuda.amp, "autocast")

parser = argparse.ArgumentParser()
parser.add_argument("--amp", action="store_true", default=False)
parser.add_argument("--apex-amp", action="store_true", default=False)
parser.add_argument("--native-amp", action="store_true", default=False)


def validate(args):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    amp_autocast = suppress
    if args.amp:
        if has_native_amp:
            args.native_amp = True
        elif has_apex:
            args.apex_amp = True
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 3))
    model = model.to(device)
    if args.apex_amp:
        model = amp.initialize(model, opt_level="O1")
    model.eval()
    with torch.no_grad():
        with amp_autocast():
            input = torch.randn((4, 3, 2, 2)).to(device)
            print(model(input).shape)


if __name__ == "__main__":
    validate(parser.parse_args())

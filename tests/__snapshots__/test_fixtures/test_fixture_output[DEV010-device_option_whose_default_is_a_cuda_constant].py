# devfix: no-run (needs a checkpoint file)
"""A traffic-forecasting script (AGCRN's Run.py): `DEVICE = 'cuda:0'` is only the default of
its `--device` option, which the script itself sets to "cpu" where there is no GPU. The test
mode's load must follow the option: `map_location=DEVICE` would still ask for cuda:0 on a
CPU-only machine."""
import argparse

import torch
from torch import nn

DEVICE = "cuda:0"
parser = argparse.ArgumentParser()
parser.add_argument("--device", default=DEVICE, type=str, help="indices of GPUs")
parser.add_argument("--mode", default="train", type=str)
args = parser.parse_args()
if not torch.cuda.is_available():
    args.device = "cpu"

model = nn.Linear(4, 2).to(args.device)
if args.mode == "test":
    model.load_state_dict(torch.load("pre-trained/model.pth", map_location=args.device))
print(model(torch.randn(3, 4, device=args.device)).shape)

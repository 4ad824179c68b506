# devfix: no-run (needs a checkpoint file)
"""`-device` is a GPU index (-1 for the CPU), as in text-classification repos: the checkpoint
must load onto the CPU, never onto `map_location=args.device`."""
import argparse

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("-device", type=int, default=-1, help="GPU index, -1 for the CPU")
parser.add_argument("-cuda", action="store_true")
parser.add_argument("-snapshot", default=None)
args = parser.parse_args()

model = nn.Linear(4, 2)
if args.snapshot is not None:
    model.load_state_dict(torch.load(args.snapshot, map_location="cpu"))
if args.cuda:
    torch.cuda.set_device(args.device)
    model = model.cuda()

# devfix: no-run (needs a checkpoint file)
"""Buggy (modelled on a public point-cloud classification repository): `--no_cuda` is parsed
with `type=bool, default=False` (given where there is no GPU), the main block sets
`args.cuda = not args.no_cuda and torch.cuda.is_available()` and hands the options to
`test(args)`, which moves the model to `device` and loads a checkpoint the training saved on
a GPU without `map_location`: that fails on a CPU-only machine. A negative flag is off where
there is a GPU, whatever its type, so `device` there is the GPU."""
import argparse

import torch
import torch.nn as nn


def test(args):
    device = torch.device("cuda" if args.cuda else "cpu")
    model = nn.DataParallel(nn.Linear(3, 40).to(device))
    model.load_state_dict(torch.load(args.model_path, map_location=device))
    model = model.eval()
    print(model(torch.randn(2, 3, device=device)).argmax(1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Point cloud classification")
    parser.add_argument("--no_cuda", type=bool, default=False, help="enables CUDA training")
    parser.add_argument("--eval", type=bool, default=False, help="evaluate the model")
    parser.add_argument("--model_path", type=str, default="", help="pretrained model path")
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    if args.cuda:
        print("Using GPU", torch.cuda.current_device())
    else:
        print("Using CPU")
    if not args.eval:
        print("training is not part of this example")
    else:
        test(args)

# devfix: weights-on-cpu  (`--device -1`, the option's default, keeps the model on the CPU)
"""A graph autoencoder's pretraining script (GraphMAE's `main_inductive.py`): `device = args.device
if args.device >= 0 else "cpu"` over an integer `--device` option, so `device` holds a GPU index
(`--device 0`) on a GPU run. The reload of the checkpoint an earlier GPU run saved needs a
`map_location`, but `map_location=device` would be `map_location=0`, which `torch.load` calls as
a function (TypeError): the state dict loads onto the CPU and `load_state_dict` copies it."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", type=int, default=-1)
parser.add_argument("--load_model", action="store_true")


def pretrain(model, device, steps=3):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        x = torch.randn(8, 4).to(device)
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


def main(args, checkpoint):
    device = args.device if args.device >= 0 else "cpu"
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 4))
    model.to(device)
    if args.load_model:
        model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    else:
        model = pretrain(model, device)
        torch.save(model.state_dict(), checkpoint)
    model.eval()
    print(model(torch.ones(1, 4).to(device)))


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    earlier = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 4))  # an earlier run, on a GPU machine
    torch.save(earlier.to("cuda" if torch.cuda.is_available() else "cpu").state_dict(), path)
    main(parser.parse_args(["--load_model"]), path)

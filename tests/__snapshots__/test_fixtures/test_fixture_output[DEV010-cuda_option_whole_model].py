# devfix: weights-on-cpu  (the script's own --cuda option is off)
"""Evaluate a whole pickled model; the script's own `--cuda` option decides the device
(ignite's super_resolution example). `map_location=device` with a new `cuda if available`
device would ignore `--cuda`; "cpu" leaves the placement to the script's own move."""
import argparse
import os
import tempfile

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true", help="use cuda")
parser.add_argument("--model", default="")
opt = parser.parse_args([])



def training_run():
    """Stands in for the run that trained and pickled the model, on a GPU machine."""
    path = os.path.join(tempfile.mkdtemp(), "model.pth")
    trained = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    torch.save(trained.cuda() if torch.cuda.is_available() else trained, path)
    return path


opt.model = opt.model or training_run()

model = torch.load(opt.model, weights_only=False, map_location="cpu")
inputs = torch.randn(2, 4)
if opt.cuda:
    model = model.cuda()
    inputs = inputs.cuda()
print(model(inputs).shape)

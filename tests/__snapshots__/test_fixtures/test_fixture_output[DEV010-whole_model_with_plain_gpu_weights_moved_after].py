# devfix: no-run  (a fragment: it resumes from a checkpoint an earlier run wrote)
"""A differentiable architecture search (in the shape of DARTS' rnn/train_search.py) that
resumes a whole pickled model and moves it itself under `--cuda`. Its architecture weights
are plain tensors made with `.cuda()`: loaded on the CPU, the script's `model.cuda()` would
leave them there, so devfix reports the load without choosing a `map_location` for it."""
import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_false")
parser.add_argument("--continue_train", action="store_true")
args = parser.parse_args()


class RNNModelSearch(nn.Module):
    def __init__(self, steps=4):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        super().__init__()
        self.cell = nn.GRUCell(8, 8)
        self.weights = Variable(torch.randn(steps, 5).to(device), requires_grad=True)

    def forward(self, x, h):
        return self.cell(x, h) * self.weights.softmax(-1).sum()


if args.continue_train:
    model = torch.load("search/model.pt")
else:
    model = RNNModelSearch()
if args.cuda:
    model = model.cuda()

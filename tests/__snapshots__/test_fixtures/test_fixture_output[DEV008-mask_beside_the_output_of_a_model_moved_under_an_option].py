# devfix: input-runs (the bug shows only with --use_cuda, which the harness does not pass)
# devfix: weights-on-cpu  (the model moves only under --use_cuda, which the harness does not pass)
"""Attention rollout for a vision transformer (in the shape of jacobgil's vit-explain): the
script moves the model to the GPU only under `--use_cuda`, and the rollout class builds its
category mask on the CPU beside the model's output. With `--use_cuda` on a GPU machine,
`output * category_mask` fails. The mask is made where the output is, not on a new
cuda-if-available device, which would break the run without `--use_cuda`."""
import argparse

import torch
from torch import nn


class GradRollout:
    def __init__(self, model):
        self.model = model

    def __call__(self, input_tensor, category_index):
        self.model.zero_grad()
        output = self.model(input_tensor)
        category_mask = torch.zeros(output.size(), device=output.device)
        category_mask[:, category_index] = 1
        loss = (output * category_mask).sum()
        loss.backward()
        return input_tensor.grad.abs().mean()


parser = argparse.ArgumentParser()
parser.add_argument("--use_cuda", action="store_true", default=False)
args = parser.parse_args()
args.use_cuda = args.use_cuda and torch.cuda.is_available()

model = nn.Sequential(nn.Flatten(), nn.Linear(12, 5))
if args.use_cuda:
    model = model.cuda()
input_tensor = torch.rand(1, 3, 2, 2)
if args.use_cuda:
    input_tensor = input_tensor.cuda()
input_tensor.requires_grad_()
print(GradRollout(model)(input_tensor, 3).item())

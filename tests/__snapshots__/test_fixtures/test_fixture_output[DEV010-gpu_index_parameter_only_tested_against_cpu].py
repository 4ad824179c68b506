# devfix: no-run  (a library function: its caller is an extension-less script outside the run)
"""Modelled on a public brain-extraction tool: `infer(device, weights)` takes "cpu" or a GPU
index (its caller passes `int(args.dev)`), only tests `if device != "cpu":` and calls `.cuda()`.
The checkpoint it loads was saved from the GPU, so the load needs a `map_location`, but not
`map_location=device`: `torch.load(f, map_location=0)` raises TypeError. It feeds
`load_state_dict`, which copies into the model wherever it is: `"cpu"` is right."""
import torch
import torch.nn as nn


def build():
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))


def infer(device, weights):
    model = build()
    if device != "cpu":
        model.cuda()
    checkpoint = torch.load(weights, map_location="cpu")
    model.load_state_dict(checkpoint["model_state_dict"])
    model.eval()
    stack = torch.randn(4, 8)
    if device != "cpu":
        stack = stack.cuda()
    with torch.no_grad():
        return model(stack).cpu().numpy()


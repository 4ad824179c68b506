# devfix: no-run  (needs a checkpoint written by the training script)
"""An optical-flow evaluation script (RAFT's evaluate.py): the network comes from a registry
devfix cannot see into, is wrapped in DataParallel and moved with `.cuda()` after its weights
are loaded. The checkpoint is the training script's, saved from the GPU: on a CPU-only machine
`torch.load` fails before anything else, so it loads onto the device the script now uses."""
import argparse
import types

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

registry = types.SimpleNamespace(raft=lambda args: nn.Conv2d(6, 2, 3, padding=1))


@torch.no_grad()
def validate(model):
    image1, image2 = torch.randn(1, 3, 32, 32), torch.randn(1, 3, 32, 32)
    flow = model(torch.cat([image1, image2], dim=1).to(device))
    return flow.abs().mean().item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="restore checkpoint")
    args = parser.parse_args()

    model = torch.nn.DataParallel(getattr(registry, "raft")(args))
    model.load_state_dict(torch.load(args.model, map_location=device))
    model.to(device)
    model.eval()

    print(validate(model.module))

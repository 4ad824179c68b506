"""A file that imports a framework (ignite, Accelerate) is not skipped whole (issue 12): the
framework places what it is given, but this file's own `torch.load` of a checkpoint written
during GPU training still fails on a CPU-only machine without `map_location`."""
import os
import tempfile

import torch
from torch import nn

try:
    import ignite  # noqa: F401  (the framework this script drives; optional here)
except ImportError:
    ignite = None

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)


def previous_run():
    path = os.path.join(tempfile.mkdtemp(), "last.pt")
    torch.save(model.state_dict(), path)
    return path


checkpoint = previous_run()
model.load_state_dict(torch.load(checkpoint, weights_only=True, map_location=device))
print(model.weight.device)

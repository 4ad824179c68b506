"""A vocoder's inference notebook (modelled on WaveGrad's `inference.ipynb`): a noise schedule
is loaded with `torch.load` straight into `torch.FloatTensor(...)`, a legacy constructor that
takes CPU data only. A schedule file saved from the GPU fails to load on a CPU-only machine,
and on a GPU machine loads as a CUDA tensor that the constructor rejects; `map_location` must
be "cpu" there, not the program's `device`."""
import os
import tempfile

import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def earlier_run():
    """Stands in for the run that tuned the schedule on a GPU machine and saved it."""
    path = os.path.join(tempfile.mkdtemp(), "7iters.pt")
    torch.save(torch.linspace(1e-6, 1e-2, 7, device=device), path)
    return path


SCHEDULES = {7: {"init": lambda **kwargs: torch.FloatTensor(torch.load(kwargs["path"], map_location="cpu")), "path": earlier_run()}}

model = nn.Linear(7, 1).to(device)
betas = SCHEDULES[7]["init"](path=SCHEDULES[7]["path"])
print(model(betas.to(device)).item())

# devfix: input-runs  (a helper module: nothing in it runs the functions)
"""A helper module that never imports torch but calls `.cuda()` on the tensors it is
given (the same script would fail on a machine without a GPU)."""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_gpu(batch):
    return [t.to(device) for t in batch]


def step(model, batch):
    model.to(device)
    inputs, targets = to_gpu(batch)
    return model(inputs), targets

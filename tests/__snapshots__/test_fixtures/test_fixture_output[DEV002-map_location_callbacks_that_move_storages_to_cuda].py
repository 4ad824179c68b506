# devfix: no-verify (the simulator cannot put a storage on its simulated GPU: torch has no CUDA storage here)
"""A GAN inversion library's weight loading (in the style of deep-generative-prior's
`utils/biggan_utils.py`): `map_location` callbacks that put every storage on the GPU, a named
one (`def map_func(storage, location): return storage.cuda()`) and a lambda. A storage's
`.to()` takes the device by keyword only (`storage.to(device)` is a TypeError), so the fix
writes `storage.to(device=device)`, which loads the weights on a CPU-only machine too."""
import os
import tempfile

import torch
import torch.nn as nn


def map_func(storage, location):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return storage.to(device=device)


def load_weights(G, path):
    G.load_state_dict(torch.load(path, map_location=map_func))


def load_ema(G_ema, path):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    G_ema.load_state_dict(torch.load(path, map_location=lambda storage, loc: storage.to(device=device)))


if __name__ == "__main__":
    generator = nn.Linear(4, 4)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "G.pth")
        torch.save(generator.state_dict(), path)
        load_weights(generator, path)
        load_ema(generator, path)
    print(generator.weight.shape)

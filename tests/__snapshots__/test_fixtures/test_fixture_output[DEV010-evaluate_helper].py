"""A helper that restores a model for evaluation, given the device by its caller."""
import os
import tempfile

import torch
import torch.nn as nn


def build_model():
    return nn.Sequential(nn.Linear(6, 6), nn.ReLU(), nn.Linear(6, 2))


def restore(path, device):
    model = build_model().to(device)
    state = torch.load(
        path,
        weights_only=True,
        map_location=device,
    )
    model.load_state_dict(state)
    return model


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    path = os.path.join(tempfile.mkdtemp(), "best.pt")
    torch.save(build_model().to(device).state_dict(), path)  # trained and saved on the GPU
    model = restore(path, device)
    with torch.no_grad():
        print(model(torch.randn(3, 6, device=device)).shape)


if __name__ == "__main__":
    main()

"""Evaluate a pickled few-shot model (prototypical-networks' scripts/predict/few_shot/eval.py):
the options are a dict read by key, and `if opt["data.cuda"]: model.cuda()` moves the model
only when the user asked for CUDA, as the episodes are. The load gets `map_location="cpu"`:
loading onto a device devfix declares would put the model on the GPU while the episodes stay
on the CPU. The guarded `.cuda()` is the user's choice and stays."""
import os
import tempfile

import torch
from torch import nn


def training_run():
    """Stands in for the run that trained and pickled the model, on a GPU machine."""
    path = os.path.join(tempfile.mkdtemp(), "best_model.pt")
    trained = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    torch.save(trained.cuda() if torch.cuda.is_available() else trained, path)
    return path


def main(opt):
    model = torch.load(opt["model.model_path"], weights_only=False, map_location="cpu")
    model.eval()
    model_opt = {"cuda": opt["data.cuda"], "way": 5}
    data_opt = {"data." + k: v for k, v in model_opt.items()}
    episode = torch.randn(data_opt["data.way"], 4)
    if data_opt["data.cuda"]:
        model.cuda()
        episode = episode.cuda()
    with torch.no_grad():
        print(model(episode).sum().item())


if __name__ == "__main__":
    main({"model.model_path": training_run(), "data.cuda": torch.cuda.is_available()})

"""A model converter (in the style of off-belief-learning's `pyhanabi/tools/convert_model.py`):
each `if args.<kind>:` block sets `device = "cuda"` for itself. The belief model's
`torch.load` has no device in reach (the one the first block sets is unset when only
`--belief_model` is given), so it loads with `map_location="cpu"`, which `load_state_dict`
copies into the model wherever it is."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn


def convert(args):
    if args.model is not None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
        agent = nn.Linear(4, 4).to(device)
        torch.save(agent.state_dict(), args.model + ".converted")
    if args.belief_model is not None:
        state_dict = torch.load(args.belief_model, map_location="cpu")
        hid_dim, in_dim = state_dict["weight"].size()
        model = nn.Linear(in_dim, hid_dim)
        model.load_state_dict(state_dict)
        return model


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "belief.pth")
        trained_on = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.save(nn.Linear(3, 5).to(trained_on).state_dict(), path)  # a belief model trained on a GPU
        parser = argparse.ArgumentParser()
        parser.add_argument("--model", default=None)
        parser.add_argument("--belief_model", default=None)
        print(convert(parser.parse_args(["--belief_model", path])))

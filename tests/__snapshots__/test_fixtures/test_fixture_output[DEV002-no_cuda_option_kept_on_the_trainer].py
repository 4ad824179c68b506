"""A depth trainer (monodepth2's trainer.py): the options class has `--no_cuda`, the trainer
keeps `self.device = torch.device("cpu" if self.opt.no_cuda else "cuda")` and moves its models
there, but one loss term hard-codes `.cuda()`. The fix uses `self.device`, so `--no_cuda` keeps
working (a second, declared device would ignore the option on a GPU machine)."""
import argparse

import torch
import torch.nn as nn


class TrainerOptions:
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument("--no_cuda", action="store_true")

    def parse(self, argv=None):
        return self.parser.parse_args(argv)


class Trainer:
    def __init__(self, options):
        self.opt = options
        self.device = torch.device("cpu" if self.opt.no_cuda else "cuda")
        self.model = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid()).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def compute_losses(self, inputs):
        mask = self.model(inputs)
        return nn.BCELoss()(mask, torch.ones(mask.shape).to(self.device))

    def train(self, steps=3):
        for _ in range(steps):
            loss = self.compute_losses(torch.randn(8, 4).to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    opts = TrainerOptions().parse(["--no_cuda"] if not torch.cuda.is_available() else [])
    print(Trainer(opts).train())

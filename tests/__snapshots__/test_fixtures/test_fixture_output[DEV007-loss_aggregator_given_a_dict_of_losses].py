"""A multi-objective loss aggregator (neuralop's `Relobralo`): `forward` takes a dictionary of
loss tensors, `losses: Dict[str, torch.Tensor]`, and rebinds it to the weighted dictionary. The
per-loss temperatures it makes with `torch.tensor([...])` stay on the CPU and meet the stacked
losses on the device. `losses` has no `.device` (a dict): the buffer's device is the one."""
from typing import Dict

import torch
import torch.nn as nn


class Relobralo(nn.Module):
    def __init__(self, num_losses, tau=1.0):
        super().__init__()
        self.tau = tau
        self.register_buffer("init_loss", torch.tensor(0.0))
        self.register_buffer("prev_losses", torch.ones(num_losses))

    def weigh_losses(self, losses):
        return {key: 1.0 * value for key, value in losses.items()}

    def forward(self, losses: Dict[str, torch.Tensor], step: int) -> torch.Tensor:
        if step == 0:
            total: torch.Tensor = torch.zeros_like(self.init_loss)
            for i, key in enumerate(losses.keys()):
                total += losses[key]
                self.prev_losses[i] = losses[key].clone().detach()
            return total
        losses = self.weigh_losses(losses)
        stacked = torch.stack(list(losses.values()))
        temperatures = torch.tensor([self.tau + step] * len(losses), device=self.init_loss.device)
        weights = torch.softmax(stacked / (temperatures * self.prev_losses), dim=0)
        self.prev_losses = stacked.detach()
        return (weights * stacked).sum()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(3, 2).to(device)
    aggregator = Relobralo(num_losses=2).to(device)
    out = model(torch.randn(4, 3).to(device))
    for step in range(2):
        losses = {"data": out.pow(2).mean(), "physics": out.abs().mean()}
        print(step, aggregator(losses, step).item())

"""A prioritized replay buffer (an embodied-navigation repository's `rollout.py`) has a `cuda()`
of its own, and its `sample` makes its batches with `torch.zeros(n, *shape).cuda()`. A spread
list of sizes cannot hold `device=` (a factory takes it by keyword only), so the tensor is made on
the CPU and `.cuda()` is torch's move, which fails on a CPU-only machine."""
import torch


class ReplayBuffer:
    def __init__(self, shapes, size=8):
        self.shapes = shapes
        self.observations = {k: torch.zeros(size, *shape) for k, shape in shapes.items()}

    def cuda(self):
        self.observations = {k: v.cuda() for k, v in self.observations.items()}

    def sample(self, n):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        batch = {k: torch.zeros(n, *shape).to(device) for k, shape in self.shapes.items()}
        weights = torch.ones(n, 1).to(device)
        return batch, weights


if __name__ == "__main__":
    buffer = ReplayBuffer({"rgb": (3, 4, 4), "map": (2,)})
    if torch.cuda.is_available():
        buffer.cuda()
    batch, weights = buffer.sample(2)
    print(sorted(batch), weights.shape)

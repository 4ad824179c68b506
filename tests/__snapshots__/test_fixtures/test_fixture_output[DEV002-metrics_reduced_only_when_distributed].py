"""BasicSR's video validation keeps its metric results in a tensor made on a hard-coded 'cuda'
and reduces them across processes only `if self.opt['dist']:`. A run without processes (the
CPU path, `num_gpu=0`) never reaches the collective, so the hard-coded device is a CPU-only
crash, not NCCL's: it is fixed to the model's device."""
import torch
import torch.distributed as dist
import torch.nn as nn


class VideoModel:
    def __init__(self, opt):
        self.opt = opt
        self.device = torch.device("cuda" if opt["num_gpu"] != 0 and torch.cuda.is_available() else "cpu")
        self.net = nn.Conv2d(3, 3, 3, padding=1).to(self.device)

    def dist_validation(self, frames):
        results = torch.zeros(len(frames), 1, dtype=torch.float32, device=self.device)
        for index, frame in enumerate(frames):
            output = self.net(frame.to(self.device))
            results[index, 0] = (output - frame.to(self.device)).abs().mean()
        if self.opt["dist"]:
            dist.reduce(results, 0)
            dist.barrier()
        return results.mean().item()


if __name__ == "__main__":
    model = VideoModel({"num_gpu": 1, "dist": dist.is_available() and dist.is_initialized()})
    print(model.dist_validation([torch.rand(1, 3, 8, 8) for _ in range(3)]))

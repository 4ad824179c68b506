# devfix: no-run (the pipeline's second GPU is reported for a fix by hand: the script still needs one)
"""lora's notebooks load their pipeline with `.to("cuda:1")`, the second GPU of the author's
machine. A new device declaration would be the current GPU, cuda:0: those moves are reported
with a hint that keeps the index, and only the unindexed `.cuda()` is fixed."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Pipeline(nn.Module):
    def __init__(self):
        super().__init__()
        self.unet = nn.Linear(8, 8)

    def forward(self, latents):
        return self.unet(latents)


pipe = Pipeline().half().to("cuda:1")
latents = torch.randn(2, 8).half().to("cuda:1")
images = pipe(latents)
seed = torch.zeros(1).to(device)
print(images.shape, seed.item())

# devfix: fails-on-gpu  (the line that combines a NumPy result with a tensor is reported, not fixed)
# devfix: no-verify (the line that combines a NumPy result with a tensor is reported, not fixed)
"""V-trace targets computed the way minimalRL's vtrace.py does: `.numpy()` on outputs of a
model on the GPU. Where the array is only read element by element, `.detach().cpu()` fixes
it; where it is combined with a tensor (`rhos * (...).numpy()`), converting would only move
the crash to the operator, so that line is reported with a hint and left alone."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
gamma = 0.98


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = nn.Linear(4, 1)

    def forward(self, s):
        return self.v(s)


critic = Critic().to(device)
s = torch.randn(6, 4, device=device)
r = torch.randn(6, 1, device=device)
rhos = torch.rand(6, 1, device=device)

with torch.no_grad():
    v = critic(s)
    cs = torch.clamp(rhos, max=1.0).detach().cpu().numpy()
    delta = rhos * (r + gamma * v).numpy()
    acc = 0.0
    for i in range(len(cs) - 1, -1, -1):
        acc = gamma * cs[i][0] * acc + float(delta[i][0])
print(round(acc, 4))

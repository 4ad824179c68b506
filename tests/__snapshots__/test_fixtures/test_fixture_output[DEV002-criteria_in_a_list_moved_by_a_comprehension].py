"""Distillation criteria kept in a list (RKD's run_distill_fitnet.py) and moved with
`[f.cuda() for f in fitnet_criterion]`: `Module.cuda()` is in place, so the comprehension
moves each criterion. The hard-coded `.cuda()` calls use the device; the criteria are not
moved a second time where they are built."""
import torch
import torch.nn as nn


class FitNet(nn.Module):
    def __init__(self, in_feature, out_feature):
        super().__init__()
        self.transform = nn.Conv2d(in_feature, out_feature, 1, bias=False)

    def forward(self, student, teacher):
        return (self.transform(student) - teacher).pow(2).mean()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
fitnet_criterion = [FitNet(4, 8), FitNet(8, 8)]
[f.to(device) for f in fitnet_criterion]
student = torch.randn(2, 4, 5, 5).to(device)
teacher = torch.randn(2, 8, 5, 5).to(device)
print(fitnet_criterion[0](student, teacher).item())

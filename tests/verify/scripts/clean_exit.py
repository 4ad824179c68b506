import sys

import torch

print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(0))
x = torch.ones(2).cuda()
assert x.is_cuda and x.device.type == "cuda" and x.type() == "torch.cuda.FloatTensor"
assert not x.cpu().is_cuda and x.cpu().device.type == "cpu"
sys.exit(0)

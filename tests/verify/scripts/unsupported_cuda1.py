import torch

x = torch.randn(2, 2).to("cuda:1")
print(x)

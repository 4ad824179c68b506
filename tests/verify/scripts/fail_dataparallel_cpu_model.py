# DataParallel on a model whose parameters are not on cuda:0
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
net = nn.Linear(4, 2)
model = nn.DataParallel(net)
net.cpu()  # e.g. moved back for checkpointing, never moved again
out = model(torch.randn(3, 4))  # BUG-LINE

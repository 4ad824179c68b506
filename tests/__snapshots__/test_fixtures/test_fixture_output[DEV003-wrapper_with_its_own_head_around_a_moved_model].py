# The same wrapper with a layer of its own: that layer is built on the CPU while the wrapped
# model and the inputs are on the GPU, so the wrapper must be moved where it is built.
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Probe(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.head = nn.Linear(2, 1)

    def forward(self, x):
        return self.head(self.model(x))


cuda = torch.cuda.is_available()
model = nn.Linear(4, 2)
if cuda:
    model = model.cuda()
probe = Probe(model).to(device)
x = torch.randn(3, 4)
if cuda:
    x = x.cuda()
print(probe(x))

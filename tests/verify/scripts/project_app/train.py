# a project's entry script: the model lives in a sibling module (models.py), the data in data.py
import argparse

import torch
import torch.nn.functional as F

from data import batches
from models import Net, NetWithBuffer

parser = argparse.ArgumentParser()
parser.add_argument("--fixed", action="store_true", help="use the model that registers its mask as a buffer")
args = parser.parse_args()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = (NetWithBuffer() if args.fixed else Net()).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in batches():
    x, y = x.to(device), y.to(device)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())

# run as `python -m project_pkg.train` from the folder above: the model comes from another
# package of the project (project_lib), outside this script's folder
import sys

import torch
import torch.nn.functional as F

from project_lib.layers import Classifier

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Classifier().to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X, Y = torch.randn(32, 4), torch.randint(0, 3, (32,))
for i in range(0, 32, 8):
    x, y = X[i:i + 8].to(device), Y[i:i + 8].to(device)
    loss = F.cross_entropy(model(x, fixed="--fixed" in sys.argv[1:]), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())

import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description="toy trainer")
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
args = parser.parse_args()

model = nn.Linear(3, 1).to(args.device)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
x = torch.randn(16, 3).to(args.device)
loss = model(x).pow(2).mean()
loss.backward()
optimizer.step()
print(loss.item())

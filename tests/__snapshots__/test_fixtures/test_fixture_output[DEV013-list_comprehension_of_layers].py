# devfix: --unsafe-fixes
"""An MLP whose hidden layers live in a plain list: on the GPU they stay behind."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DeepMLP(nn.Module):
    def __init__(self, d=8, depth=3, n_out=2):
        super().__init__()
        self.hidden = nn.ModuleList([nn.Linear(d, d) for _ in range(depth)])
        self.out = nn.Linear(d, n_out)

    def forward(self, x):
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return self.out(x)


model = DeepMLP().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 8).to(device)
y = torch.randint(0, 2, (5,)).to(device)
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()
print(loss.item(), len(list(model.parameters())))

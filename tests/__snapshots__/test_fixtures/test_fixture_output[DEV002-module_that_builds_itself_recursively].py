"""A recursive model (a tree of layers, in the shape of the recursive networks of tree-LSTM
tutorials) whose `__init__` builds an instance of its own class: moved with a hard-coded
`.cuda()`. The analysis builds the class once, however deep the recursion goes."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Tree(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.child = Tree(depth - 1) if depth > 0 else None

    def forward(self, x):
        x = torch.relu(self.fc(x))
        return self.child(x) if self.child is not None else x


model = Tree(2).to(device)
print(model(torch.randn(2, 4).to(device)).shape)

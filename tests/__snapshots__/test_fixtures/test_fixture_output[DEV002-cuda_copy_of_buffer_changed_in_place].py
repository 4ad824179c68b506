"""An agent that keeps its observations in a buffer it overwrites in place, and feeds the
policy `self.states.cuda()` (the pytorch/examples RPC agent's shape). `.cuda()` of a CPU
tensor is always a copy; `.to(device)` on a CPU-only machine is the buffer itself, which the
next in-place write would change after autograd saved it ("modified by an inplace
operation"). So this one becomes `.to(device, copy=True)`; the others plain `.to(device)`."""
import torch
import torch.nn as nn


class Agent:
    def __init__(self, observers):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.policy = nn.Linear(4, 2).to(device)
        self.states = torch.zeros(observers, 4)

    def observe(self, index, state):
        self.states[index].copy_(state)

    def act(self):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return torch.softmax(self.policy(self.states.to(device, copy=True)), dim=-1)


agent = Agent(3)
total = 0
for step in range(2):
    for index in range(3):
        agent.observe(index, torch.randn(4))
    total = total + agent.act().log().sum()
total.backward()
print(agent.policy.weight.grad.shape)

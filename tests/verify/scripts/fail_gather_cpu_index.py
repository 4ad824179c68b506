# DQN-style update: actions from the replay buffer built on the CPU, gathered from GPU Q-values
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2)).to(device)
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
replay = [(torch.randn(4), random.randrange(2), random.random()) for _ in range(64)]
for step in range(3):
    batch = random.sample(replay, 16)
    states = torch.stack([s for s, _, _ in batch]).to(device)
    actions = torch.tensor([a for _, a, _ in batch]).unsqueeze(1)
    rewards = torch.tensor([r for _, _, r in batch], device=device)
    q = policy(states).gather(1, actions).squeeze(1)  # BUG-LINE
    loss = F.smooth_l1_loss(q, rewards)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

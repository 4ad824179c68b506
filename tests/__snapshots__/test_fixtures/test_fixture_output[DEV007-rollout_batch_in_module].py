"""An actor-critic agent that turns its stored transitions into tensors in its own methods
(the shape of many small RL repositories). Every tensor the agent builds meets its weights, or
a result of them, somewhere down the chain: all of them are fixed in one run, so a second run
finds nothing (a fixed meeting counts as on the module's device)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

gamma = 0.98
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.body = nn.Linear(4, 16)
        self.pi_head = nn.Linear(16, 2)
        self.v_head = nn.Linear(16, 1)

    def pi(self, x):
        return F.softmax(self.pi_head(F.relu(self.body(x))), dim=-1)

    def v(self, x):
        return self.v_head(F.relu(self.body(x)))

    def put(self, transition):
        self.data.append(transition)

    def make_batch(self):
        states, actions, rewards, next_states, masks = [], [], [], [], []
        for s, a, r, s_next, done in self.data:
            states.append(s)
            actions.append([a])
            rewards.append([r])
            next_states.append(s_next)
            masks.append([0.0 if done else 1.0])
        self.data = []
        return (torch.tensor(states, dtype=torch.float, device=next(self.parameters()).device), torch.tensor(actions, device=next(self.parameters()).device),
                torch.tensor(rewards, device=next(self.parameters()).device), torch.tensor(next_states, dtype=torch.float, device=next(self.parameters()).device),
                torch.tensor(masks, device=next(self.parameters()).device))

    def train_step(self, optimizer):
        s, a, r, s_next, mask = self.make_batch()
        td_target = r + gamma * self.v(s_next) * mask
        delta = td_target - self.v(s)
        advantages = delta.detach().cpu().numpy()
        pi_a = self.pi(s).gather(1, a)
        loss = -(torch.log(pi_a) * delta.detach()).mean() + F.smooth_l1_loss(self.v(s), td_target.detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(advantages.mean())


agent = Agent().to(device)
optimizer = torch.optim.Adam(agent.parameters(), lr=1e-3)
for step in range(4):
    agent.put(([0.1, 0.2, 0.3, 0.4], step % 2, 1.0, [0.2, 0.3, 0.4, 0.5], step == 3))
print(agent.train_step(optimizer))

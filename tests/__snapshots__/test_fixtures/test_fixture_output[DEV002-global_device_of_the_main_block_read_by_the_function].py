import random

import torch
import torch.nn as nn

N_ACTIONS = 4


class QNet(nn.Module):
    def __init__(self, n_in, n_actions):
        super().__init__()
        self.fc = nn.Linear(n_in, n_actions)

    def forward(self, x):
        return self.fc(x)


def select_action(state, eps):
    """Epsilon-greedy: the policy's best action, or a random one (already on `device`)."""
    if random.random() > eps:
        with torch.no_grad():
            return policy_net(state.to(device)).argmax(1).view(1, 1)
    return torch.tensor([[random.randrange(N_ACTIONS)]], device=device, dtype=torch.long)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    policy_net = QNet(8, N_ACTIONS).to(device)
    for step in range(5):
        state = torch.randn(1, 8)
        action = select_action(state, eps=0.0 if step % 2 else 1.0)
        print(step, action.item())

"""A reinforcement-learning script (modelled on a public collection of RL algorithms): `--train`
trains the agent and saves it, `--test` loads it and plays. A test run loads what an earlier
training run saved, often on a GPU machine, so the loads need `map_location` on a CPU-only
one: the save under `if args.train:` is not this run's when only `--test` is given."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--train", dest="train", action="store_true", default=False)
parser.add_argument("--test", dest="test", action="store_true", default=False)
args = parser.parse_args(["--test"])

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class DDPG:
    def __init__(self, state_dim=3, action_dim=1):
        self.qnet = nn.Linear(state_dim + action_dim, 1).to(device)
        self.policy_net = nn.Sequential(nn.Linear(state_dim, action_dim), nn.Tanh()).to(device)

    def act(self, state):
        state = torch.FloatTensor(state).unsqueeze(0).to(device)
        return self.policy_net(state).detach().cpu().numpy()[0]

    def save_model(self, path):
        torch.save(self.qnet.state_dict(), path + "_q")
        torch.save(self.policy_net.state_dict(), path + "_policy")

    def load_model(self, path):
        self.qnet.load_state_dict(torch.load(path + "_q", map_location=device))
        self.policy_net.load_state_dict(torch.load(path + "_policy", map_location=device))
        self.qnet.eval()
        self.policy_net.eval()


def earlier_training_run(prefix):
    """Stands in for the `--train` run that wrote the checkpoints (on a GPU machine)."""
    trained = DDPG()
    torch.save(trained.qnet.state_dict(), prefix + "_q")
    torch.save(trained.policy_net.state_dict(), prefix + "_policy")


model_path = os.path.join(tempfile.mkdtemp(), "ddpg")
earlier_training_run(model_path)
agent = DDPG()

if args.train:
    for episode in range(2):
        print("episode", episode, agent.act([0.1, 0.2, 0.3]))
    agent.save_model(model_path)

if args.test:
    agent.load_model(model_path)
    for episode in range(2):
        print("test episode", episode, agent.act([0.1, 0.2, 0.3]))

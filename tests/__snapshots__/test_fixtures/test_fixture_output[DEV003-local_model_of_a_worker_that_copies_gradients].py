# devfix: fails-on-gpu  (the local model is reported, not moved: its gradients go to a CPU model)
# devfix: no-verify (the local model is reported, not moved: its gradients go to a CPU model)
"""An A3C worker (Policy-Gradient-Methods' `a3c/worker.py`): each worker trains a local copy of
the global network, kept in CPU shared memory, and hands its gradients over with
`global_param._grad = local_param._grad`. The worker sends its states to `self.device` (CUDA
where there is one) while its local network stays on the CPU, a real bug; but moving the local
network to the GPU breaks the hand-over to the CPU model (and CUDA in forked workers), so it is
reported without a fix. The evaluation agent beside it, which hands nothing over, has its network
moved where it is built."""
import torch
import torch.nn as nn


class Worker:
    def __init__(self, global_network, global_optimizer):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.global_network = global_network
        self.global_optimizer = global_optimizer
        self.local_network = nn.Linear(4, 2)
        self.local_network.load_state_dict(global_network.state_dict())

    def update(self, states):
        states = torch.FloatTensor(states).to(self.device)
        loss = self.local_network(states).pow(2).mean()
        self.global_optimizer.zero_grad()
        loss.backward()
        for local_params, global_params in zip(self.local_network.parameters(), self.global_network.parameters()):
            global_params._grad = local_params._grad
        self.global_optimizer.step()
        self.local_network.load_state_dict(self.global_network.state_dict())
        return loss.item()


class Evaluator:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.network = nn.Linear(4, 2).to(self.device)

    def act(self, state):
        state = torch.FloatTensor(state).to(self.device)
        return self.network(state).argmax().item()


if __name__ == "__main__":
    global_network = nn.Linear(4, 2)
    global_network.share_memory()
    optimizer = torch.optim.SGD(global_network.parameters(), lr=0.1)
    print(Worker(global_network, optimizer).update([[0.1, 0.2, 0.3, 0.4]]))
    print(Evaluator().act([0.1, 0.2, 0.3, 0.4]))

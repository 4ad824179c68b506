"""A variational matrix factorisation (MetaRec's VMF): the module's `__call__` samples user
and item vectors through a plain helper, which draws its noise on the CPU. Once the model is
on the GPU, `mu + eps * var` mixes devices. The noise must follow `var`, wherever the module
is: the program's own device variable would be wrong for a model kept on the CPU."""

import torch
from torch import nn


def sample_gaussian(mu, log_var):
    var = log_var.mul(0.5).exp_()
    eps = torch.FloatTensor(var.size()).to(var.device).normal_()
    return mu + eps * var


class MF(nn.Module):
    def __init__(self, n_user, n_item, k=4):
        super().__init__()
        self.user_mu = nn.Embedding(n_user, k)
        self.user_lv = nn.Embedding(n_user, k)
        self.item_mu = nn.Embedding(n_item, k)
        self.item_lv = nn.Embedding(n_item, k)

    def __call__(self, train_x):
        user_id, item_id = train_x[:, 0], train_x[:, 1]
        vector_user = sample_gaussian(self.user_mu(user_id), self.user_lv(user_id))
        vector_item = sample_gaussian(self.item_mu(item_id), self.item_lv(item_id))
        return torch.sum(vector_user * vector_item, dim=1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = MF(10, 20).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x = torch.stack([torch.randint(0, 10, (8,)), torch.randint(0, 20, (8,))], dim=1).to(device)
    y = torch.rand(8, device=device)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

# devfix: input-runs
# devfix: weights-on-cpu  (the training script never moves the model; the fix follows it)
"""MetaRec's VMF as it ships: the training script never moves the model, so the noise drawn
on the CPU by the module's helper meets CPU weights and the run works. The helper is still
wrong for a model on the GPU, and the fix must follow the module (`var.device`): a device
variable declared in the helper (`cuda` where there is one) would move the noise to the GPU
beside the CPU weights and break this program on a GPU machine."""

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


model = MF(10, 20)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    x = torch.stack([torch.randint(0, 10, (8,)), torch.randint(0, 20, (8,))], dim=1)
    loss = nn.functional.mse_loss(model(x), torch.rand(8))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())

# devfix: weights-on-cpu  (the class pins its own device to the CPU, and the fix uses it)
"""A meta-learning model (MetaRec's MetaHIN) that pins itself to the CPU (`self.device`) and
builds its attention weights there, but whose fine-tuning step calls `.cuda()` on the model
and its support set, one of them inside a `map` lambda. It dies on a CPU-only machine, and on
a GPU it meets the CPU attention weights. The class's own device is the one to use (never a
second device declared beside it), and every hard-coded move goes, the lambda's too."""

import torch
from torch import nn


class HML(nn.Module):
    def __init__(self):
        super().__init__()
        self.device = torch.device("cpu")
        self.user_emb = nn.Linear(4, 3)
        self.item_emb = nn.Linear(4, 3)

    def fine_tune(self, support_x, support_mp):
        if self.to(self.device):
            support_x = support_x.to(self.device)
            support_mp = dict(support_mp)
            for mp, mp_data in support_mp.items():
                support_mp[mp] = list(map(lambda x: x.to(self.device), mp_data))
        user = self.user_emb(support_x)
        neighbours = [self.item_emb(torch.cat(support_mp[mp])).mean(0) for mp in support_mp]
        mp_att = torch.FloatTensor([1.0 / len(neighbours)] * len(neighbours)).to(self.device)
        return (user * (torch.stack(neighbours, 0) * mp_att.unsqueeze(1)).sum(0)).sum()


model = HML()
print(model.fine_tune(torch.randn(2, 4), {"ub": [torch.randn(3, 4), torch.randn(2, 4)]}).item())

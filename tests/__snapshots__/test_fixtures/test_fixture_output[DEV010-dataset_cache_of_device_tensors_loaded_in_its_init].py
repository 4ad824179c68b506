"""Buggy (modelled on a deep-learning course's sine-regression assignment): the dataset makes
its samples on the device (`torch.rand(..., device=device)`), caches them with `torch.save`
and, on later runs, loads the cache without `map_location`, which fails on a CPU-only machine
when the cache was written on a GPU. The cache holds what the program keeps on the device,
so it is loaded onto `device`, not onto the CPU as a dataset's file usually is."""
import math
import os
import tempfile

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
CACHE = tempfile.mkdtemp()


class SineDataset(torch.utils.data.Dataset):
    def __init__(self, num_samples):
        file_name = os.path.join(CACHE, f"{num_samples}.pt")
        if os.path.exists(file_name):
            data = torch.load(file_name, map_location=device)
        else:
            data = torch.rand(num_samples, 1, device=device) * 2 * math.pi
            torch.save(data, file_name)
        self.data = data
        self.label = torch.sin(data)

    def __getitem__(self, index):
        return self.data[index], self.label[index]

    def __len__(self):
        return len(self.data)


model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
for _ in range(2):
    test_set = SineDataset(32)
    loss = nn.MSELoss()(model(test_set.data), test_set.label)
    print(round(loss.item(), 3))

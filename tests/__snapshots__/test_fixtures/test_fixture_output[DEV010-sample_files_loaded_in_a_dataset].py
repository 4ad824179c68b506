"""A turbulence-forecasting dataset (Turbulent-Flow-Net's `utils/train_utils.py`): `__getitem__`
loads one saved sample per item. A sample written by a run on a GPU machine needs a
`map_location` to load on a CPU-only one, and inside a dataset that is the CPU: a DataLoader's
workers run `__getitem__`, where `map_location=device` would start CUDA in forked processes."""
import os
import tempfile

import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SampleDataset(Dataset):
    def __init__(self, indices, direc):
        self.list_IDs = indices
        self.direc = direc

    def __len__(self):
        return len(self.list_IDs)

    def __getitem__(self, index):
        sample = torch.load(os.path.join(self.direc, "sample_" + str(self.list_IDs[index]) + ".pt"), map_location="cpu")
        return sample[:-1].float(), sample[-1:].float()


def data_gen(direc, n):
    """Stands in for the earlier run that wrote the samples (on a GPU machine)."""
    for i in range(n):
        torch.save(torch.randn(4, 3).to(device), os.path.join(direc, "sample_" + str(i) + ".pt"))


if __name__ == "__main__":
    direc = tempfile.mkdtemp()
    data_gen(direc, 4)
    loader = DataLoader(SampleDataset(list(range(4)), direc), batch_size=2, num_workers=0)
    model = torch.nn.Linear(3, 3).to(device)
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        print((model(x).mean(1, keepdim=True) - y).abs().mean().item())

"""The whole training loop inside `try: ... except Exception as e: log it` (MelGAN's trainer):
the handler says why a run ended, it is no CUDA fallback. The batches' `.cuda()` crash on a
CPU-only machine as the models' do, and are fixed with them."""
import logging

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

logger = logging.getLogger(__name__)


def train(loader):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    finished = False
    try:
        for epoch in range(2):
            for x, y in loader:
                x = x.to(device)
                y = y.to(device)
                loss = ((model(x) - y) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        finished = True
    except Exception as e:
        logger.info("Exiting due to exception: %s", e)
    return finished


loader = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)
assert train(loader), "training ended early"

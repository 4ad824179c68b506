# devfix: fails-on-gpu  (the full-batch evaluation of the dataset's source tensor is reported, not fixed)
# devfix: no-verify (the full-batch evaluation of the dataset's source tensor is reported, not fixed)
"""A seq2seq course notebook (dataflowr's Module 13): the sequences, read from NumPy, fill a
TensorDataset for training and are also fed whole to the model at the end. Moving them to the
device where they are made would put the dataset on the GPU, and the `pin_memory=True` that
the moved batches earn would then crash ("cannot pin ... only dense CPU tensors can be
pinned"). The dataset's source stays on the CPU and is reported; the training loop's batches
are moved and the loader pinned."""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
encoder = nn.Embedding(31, 8).to(device)
head = nn.Linear(8, 31).to(device)
optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-2)

X = torch.from_numpy(np.random.randint(1, 31, (20, 6))).long()
y = torch.from_numpy(np.random.randint(1, 31, (20, 6))).long()
dataset = TensorDataset(X[:10], y[:10])
dataloader = DataLoader(dataset, batch_size=5, shuffle=True, num_workers=0, pin_memory=True)

for epoch in range(2):
    for input_tensor, target_tensor in dataloader:
        input_tensor, target_tensor = input_tensor.to(device, non_blocking=True), target_tensor.to(device, non_blocking=True)
        logits = head(encoder(input_tensor))
        loss = nn.functional.cross_entropy(logits.reshape(-1, 31), target_tensor.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

with torch.no_grad():
    print(head(encoder(X[:10])).argmax(-1).shape)

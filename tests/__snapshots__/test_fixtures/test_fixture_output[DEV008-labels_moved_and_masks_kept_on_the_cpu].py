"""A node classifier (in the shape of GNNExplainer's PyG example) whose labels are made on the
CPU and meet the model's output on the device: the labels are the bug. The train and test
masks stay on the CPU: a CPU index into a device tensor is allowed."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
num_nodes, num_train = 10, 7
labels = torch.LongTensor(np.random.randint(0, 3, num_nodes)).to(device)
features = torch.randn(num_nodes, 4).to(device)
model = nn.Linear(4, 3).to(device)
shuffle = np.random.permutation(num_nodes)
train_mask = num_train * [True] + (num_nodes - num_train) * [False]
train_mask = torch.BoolTensor([train_mask[i] for i in shuffle])
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    pred = model(features)
    loss = F.cross_entropy(pred[train_mask], labels[train_mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

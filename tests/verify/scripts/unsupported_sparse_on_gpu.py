"""Sparse attention as graph-attention layers write it (pyGAT's SpGraphAttentionLayer): a
sparse matrix built from GPU indices and values is on the GPU on real hardware, but a sparse
tensor has no storage the simulation can tag. verify must say it cannot check this, never
report a device bug a GPU would not have."""
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
indices = torch.tensor([[0, 1], [1, 0]]).to(device)
values = torch.ones(2).to(device)
adjacency = torch.sparse_coo_tensor(indices, values, (2, 2))
print(torch.matmul(adjacency, torch.ones(2, 1).to(device)))

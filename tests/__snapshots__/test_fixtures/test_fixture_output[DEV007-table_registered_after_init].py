"""torchmd-net's TensorEmbedding precomputes an embedding table for inference: `__init__` keeps
a plain placeholder (`self.Zij_map = torch.empty(0, 0, 0)`, for TorchScript), and
`setup_for_inference` builds the table on the CPU from the module's own layers, then registers
it as a buffer. On a GPU the layers' outputs do not fit into the CPU table. The fix makes the
table where the parameters are: not on the placeholder's device, which `.to()` never moved."""
import torch
import torch.nn as nn


class TensorEmbedding(nn.Module):
    def __init__(self, hidden_channels=8, max_z=10):
        super().__init__()
        self.hidden_channels = hidden_channels
        self.emb = nn.Embedding(max_z, hidden_channels)
        self.emb2 = nn.Linear(2 * hidden_channels, hidden_channels)
        self.Zij_map = torch.empty(0, 0, 0)
        self.inference_mode = False

    def setup_for_inference(self, z):
        with torch.no_grad():
            max_z = z.max().item()
            zij_map = torch.zeros((max_z + 1, max_z + 1, self.hidden_channels), device=next(self.parameters()).device)
            for zi in torch.unique(z):
                for zj in torch.unique(z):
                    zij_map[zi, zj] = self.emb2(torch.cat([self.emb(zi), self.emb(zj)], dim=-1))
        del self.Zij_map
        self.register_buffer("Zij_map", zij_map)
        self.inference_mode = True

    def forward(self, z, edge_index):
        if self.inference_mode:
            return self.Zij_map[z[edge_index[0]], z[edge_index[1]]]
        pairs = torch.cat([self.emb(z[edge_index[0]]), self.emb(z[edge_index[1]])], dim=-1)
        return self.emb2(pairs)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    embedding = TensorEmbedding().to(device)
    z = torch.tensor([1, 6, 8, 1], device=device)
    edge_index = torch.tensor([[0, 1, 2], [1, 2, 3]], device=device)
    embedding.setup_for_inference(z)
    print(embedding(z, edge_index).shape)

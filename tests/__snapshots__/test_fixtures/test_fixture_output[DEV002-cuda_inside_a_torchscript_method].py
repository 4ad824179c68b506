# devfix: no-run  (its TorchScript cell keeps device="cuda": reported, not fixed)
"""A light GRU layer compiled by TorchScript (pytorch-kaldi's `liGRU_layer`): the cell, a
`@torch.jit.script_method`, makes its initial state with `device="cuda"`. The usual fix needs a
device declaration, `torch.cuda.is_available()`, which TorchScript refuses, so the layer could
no longer be built on any machine: inside TorchScript code the line is reported, not fixed. The
script around it is fixed as usual."""
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class LightGRU(torch.jit.ScriptModule):
    def __init__(self, hidden_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.wz = nn.Linear(hidden_size, hidden_size)

    @torch.jit.script_method
    def initial_state(self, batch_size):
        # type: (int) -> Tensor
        return torch.zeros(batch_size, self.hidden_size, device="cuda")

    @torch.jit.script_method
    def forward(self, x):
        return torch.sigmoid(self.wz(x))


layer = LightGRU(8).to(device)
print(layer(torch.randn(2, 8).to(device)).shape, layer.initial_state(2).shape)

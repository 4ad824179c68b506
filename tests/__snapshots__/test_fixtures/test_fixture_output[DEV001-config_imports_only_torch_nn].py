"""A configuration module that only imports `torch.nn` (ignite's py_config_runner configs):
the hard-coded "cuda" crashes without a GPU, and the conditional needs `torch` itself, which
is not imported. devfix used to write `torch.cuda.is_available()` here: a NameError."""
import torch.nn as nn
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Linear(3, 2).to(device)
criterion = nn.CrossEntropyLoss()
print(model.weight.device)

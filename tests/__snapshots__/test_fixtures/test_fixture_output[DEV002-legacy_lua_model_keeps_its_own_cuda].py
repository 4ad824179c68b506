# devfix: no-run  (torch.utils.serialization.load_lua left PyTorch in 1.0)
"""A sketch generator (modelled on pixel2style2pixel's `scripts/generate_sketch_data.py`):
the model comes from the legacy Lua port, a `torch.legacy.nn` object with its own `.cuda()`
and no `.to()`, so its `.cuda()` is left as it is; the input tensor's is fixed."""
import torch
from torch.utils.serialization import load_lua

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = load_lua("model_gan.t7")
model.evaluate()
model.cuda()
x = torch.zeros(1, 1, 8, 8).to(device)
print(model.forward(x))

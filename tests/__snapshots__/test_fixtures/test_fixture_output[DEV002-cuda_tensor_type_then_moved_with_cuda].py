"""A preprocessing runner (in the style of midlevel-reps' `evkit/preprocess/transforms.py`)
that converts its input with the CUDA tensor type and then calls `.cuda()` on the result:
both the type and the move fail without a GPU, and both are fixed, the type inside the move's
rewrite (the two start at the same place in the file)."""
import numpy as np
import torch


def runner(x):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(x, torch.Tensor):  # for training
        x = (torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor)(x.to(device))
    else:  # for testing
        x = (torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor)(x).to(device)
    return x.permute(0, 3, 1, 2) / 255.0


frames = np.random.randint(0, 255, size=(2, 8, 8, 3)).astype(np.float32)
print(runner(frames).shape)
print(runner(torch.from_numpy(frames)).shape)

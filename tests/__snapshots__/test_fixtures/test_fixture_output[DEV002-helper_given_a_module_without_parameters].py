"""SimSwap's `postprocess(swapped_face, target_mask, smooth_mask)`: the face mask is moved with
a hard-coded `.cuda()` before it is blurred by `smooth_mask`, a module that holds its kernel as
a buffer and has no parameter. The fix declares a device rather than deriving it with
`next(smooth_mask.parameters())`, which would raise StopIteration."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftErosion(nn.Module):
    def __init__(self, kernel_size=5, threshold=0.6):
        super().__init__()
        self.padding = kernel_size // 2
        self.threshold = threshold
        kernel = torch.ones(1, 1, kernel_size, kernel_size) / kernel_size**2
        self.register_buffer("weight", kernel)

    def forward(self, x):
        x = F.conv2d(x.float(), weight=self.weight, padding=self.padding)
        mask = x >= self.threshold
        return x, mask


def postprocess(swapped_face, target_mask, smooth_mask):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mask_tensor = torch.from_numpy(target_mask.copy()).float().mul_(1 / 255.0).to(device)
    soft_mask, _ = smooth_mask(mask_tensor.unsqueeze(0).unsqueeze(0))
    soft_mask = soft_mask.squeeze().cpu().numpy()[:, :, np.newaxis]
    return swapped_face * soft_mask


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    smooth_mask = SoftErosion().to(device)
    face = np.random.rand(16, 16, 3)
    mask = (np.random.rand(16, 16) * 255).astype(np.uint8)
    print(postprocess(face, mask, smooth_mask).shape)

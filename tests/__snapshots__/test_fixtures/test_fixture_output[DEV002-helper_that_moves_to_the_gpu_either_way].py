"""An inference demo's conversion helper (in the style of FBA_Matting's `np_to_torch`): its
`permute=True` flag chooses the layout, and both branches end in `.cuda()`. The flag is no
GPU switch, so the helper is plain hard-coded CUDA: its moves and the model's use the device,
and the demo runs on a CPU-only machine."""
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def np_to_torch(x, permute=True):
    if permute:
        return torch.from_numpy(x).permute(2, 0, 1)[None, :, :, :].float().to(device)
    else:
        return torch.from_numpy(x)[None, :, :, :].float().to(device)


def predict(model, image, trimap):
    with torch.no_grad():
        image_torch = np_to_torch(image)
        trimap_torch = np_to_torch(trimap)
        alpha = model(torch.cat([image_torch, trimap_torch], dim=1))
    return alpha[0, 0].cpu().numpy()


if __name__ == "__main__":
    model = nn.Conv2d(5, 1, 3, padding=1)
    model.eval().to(device)
    image = np.random.rand(16, 16, 3).astype(np.float32)
    trimap = np.random.rand(16, 16, 2).astype(np.float32)
    print(predict(model, image, trimap).shape)

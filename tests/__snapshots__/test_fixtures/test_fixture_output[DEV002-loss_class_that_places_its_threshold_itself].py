"""An online hard-example loss (modelled on face-parsing.PyTorch's `loss.py` self-test): its
`__init__` puts a threshold tensor on the GPU with a hard-coded `.cuda()`, which dies on a
CPU-only machine and is fixed; the script's own `OhemCELoss(...).cuda()` is left alone, since
the loss owns no layer, parameter or buffer and `.cuda()` on it copies nothing."""
import torch
import torch.nn as nn


class OhemCELoss(nn.Module):
    def __init__(self, thresh, n_min, ignore_lb=255):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        super().__init__()
        self.thresh = -torch.log(torch.tensor(thresh, dtype=torch.float)).to(device)
        self.n_min = n_min
        self.criteria = nn.CrossEntropyLoss(ignore_index=ignore_lb, reduction="none")

    def forward(self, logits, labels):
        loss = self.criteria(logits, labels).view(-1)
        loss, _ = torch.sort(loss, descending=True)
        if loss[self.n_min] > self.thresh:
            loss = loss[loss > self.thresh]
        else:
            loss = loss[: self.n_min]
        return torch.mean(loss)


if __name__ == "__main__":
    torch.manual_seed(15)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    criteria = OhemCELoss(thresh=0.7, n_min=16 * 20 * 20 // 16).cuda()
    net = nn.Conv2d(3, 19, kernel_size=3, padding=1).to(device)
    inten = torch.randn(16, 3, 20, 20, device=device)
    lbs = torch.randint(0, 19, [16, 20, 20], device=device)
    loss = criteria(net(inten), lbs)
    loss.backward()
    print(loss.item())

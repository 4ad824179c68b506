# devfix: no-run (the model's .cuda() is reported without a fix: the script still needs a GPU)
"""ocr.pytorch's CRNN trainer: `device` starts as the CPU and becomes `cuda:0` only after the
model's `crnn.cuda()`, under a configuration constant that is always true. Replacing that
`.cuda()` with `.to(device)` would keep the model on the CPU of a GPU machine while the batches
go to `cuda:0`: it is reported without a fix. The declaration after it gets its fallback; the
loss holds no tensors, and its `.cuda()` copies nothing."""
import torch
import torch.nn as nn

USE_CUDA = True


class CRNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.rnn = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out).log_softmax(-1)


crnn = CRNN()
criterion = nn.CTCLoss()
device = torch.device("cpu")
if USE_CUDA:
    crnn.cuda()
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    criterion = criterion.cuda()
optimizer = torch.optim.Adam(crnn.parameters(), lr=1e-3)
for step in range(2):
    images = torch.randn(4, 6, 8).to(device)
    preds = crnn(images).permute(1, 0, 2)
    targets = torch.randint(1, 10, (4, 3))
    loss = criterion(preds, targets, torch.full((4,), 6, dtype=torch.long), torch.full((4,), 3, dtype=torch.long))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

"""An ImageNet evaluation script (Cadene's pretrained-models imagenet_eval.py): its training
loader was commented out, so `train(train_loader, ...)` raises NameError before `train` runs,
while the evaluation path is what users run. The evaluation path's hard-coded `.cuda()` calls
crash a CPU-only machine and are fixed; `train` is never reached and is left as it is."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main(evaluate=True):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(8, 3)
    val_loader = DataLoader(TensorDataset(torch.randn(12, 8), torch.randint(0, 3, (12,))), batch_size=4)
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    model = torch.nn.DataParallel(model).to(device)
    if evaluate:
        return validate(val_loader, model, criterion)
    for epoch in range(2):
        train(train_loader, model, criterion, optimizer)


def train(loader, model, criterion, optimizer):
    for input, target in loader:
        target = target.cuda()
        loss = criterion(model(input), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(loader, model, criterion):
    device = next(model.parameters()).device
    total = 0.0
    with torch.no_grad():
        for input, target in loader:
            target = target.to(device)
            input = input.to(device)
            total += criterion(model(input), target).item()
    return total


if __name__ == "__main__":
    print(main())

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def evaluate(model, loader):
    """Accuracy of `model` over `loader`."""
    device = next(model.parameters()).device
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for inputs, targets in loader:
            inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
            predictions = model(inputs).argmax(dim=1)
            correct += (predictions == targets).sum().item()
            total += targets.size(0)
    return correct / total


@torch.inference_mode()
def predict(model, test_loader):
    device = next(model.parameters()).device
    outputs = []
    for (inputs,) in test_loader:
        inputs = inputs.to(device, non_blocking=True)
        outputs.append(model(inputs).softmax(dim=1).cpu())
    return torch.cat(outputs)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Linear(4, 3).to(device)
    data = TensorDataset(torch.randn(12, 4), torch.randint(0, 3, (12,)))
    print(evaluate(net, DataLoader(data, batch_size=4, pin_memory=True)))
    print(predict(net, DataLoader(TensorDataset(torch.randn(6, 4)), batch_size=3, pin_memory=True)).shape)

import torch
import torch.nn as nn


def predict(model, batch):
    device = next(model.parameters()).device
    # the model arrives from the caller; its device is wherever the caller put it
    model.eval()
    with torch.no_grad():
        return model(batch.to(device)).argmax(dim=1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Linear(5, 3).to(device)
    print(predict(net, torch.randn(4, 5)))

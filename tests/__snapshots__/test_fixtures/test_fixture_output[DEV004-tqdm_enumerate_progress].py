import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

try:
    from tqdm import tqdm
except ImportError:  # keep the script runnable without tqdm
    def tqdm(iterable, **kwargs):
        return iterable

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 32), nn.ReLU(), nn.Linear(32, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()

digits = TensorDataset(torch.rand(40, 1, 28, 28), torch.randint(0, 10, (40,)))
loader = DataLoader(digits, batch_size=8, pin_memory=True)

for epoch in range(2):
    correct = 0
    for step, (images, targets) in enumerate(tqdm(loader, desc=f"epoch {epoch}")):
        images, targets = images.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        logits = model(images)
        loss = loss_fn(logits, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        correct += (logits.argmax(dim=1) == targets).sum().item()
    print(f"epoch {epoch}: accuracy {correct / len(digits):.2f}")

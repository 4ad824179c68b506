"""A Hugging Face style loop in a helper: dict batches unpacked into the model with **batch."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):
        return {"input_ids": torch.randint(0, 100, (8,)), "labels": torch.tensor(i % 2)}


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, input_ids, labels=None):
        logits = self.head(self.embed(input_ids).mean(1))
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return loss, logits


def train(model, dataloader, optimizer):
    device = next(model.parameters()).device
    model.train()
    for step, batch in enumerate(dataloader):
        batch = {key: value.to(device, non_blocking=True) for key, value in batch.items()}
        loss, _ = model(**batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 2 == 0:
            print(step, loss.item())


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Classifier().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train(model, DataLoader(TokenDataset(), batch_size=4, shuffle=True, pin_memory=True), optimizer)


if __name__ == "__main__":
    main()

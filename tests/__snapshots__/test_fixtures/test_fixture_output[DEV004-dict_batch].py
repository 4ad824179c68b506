import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __init__(self, n=16, seq_len=5):
        self.input_ids = torch.randint(0, 30, (n, seq_len))
        self.attention_mask = torch.ones(n, seq_len)
        self.labels = torch.randint(0, 2, (n,))

    def __len__(self):
        return self.labels.size(0)

    def __getitem__(self, i):
        return {"input_ids": self.input_ids[i], "attention_mask": self.attention_mask[i], "labels": self.labels[i]}


class BagOfEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(30, 8)
        self.classifier = nn.Linear(8, 2)

    def forward(self, input_ids, attention_mask):
        summed = (self.embed(input_ids) * attention_mask.unsqueeze(-1)).sum(1)
        return self.classifier(summed / attention_mask.sum(1, keepdim=True))


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = BagOfEmbeddings().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_dataloader = DataLoader(TokenDataset(), batch_size=4, pin_memory=True)

model.train()
for batch in train_dataloader:
    batch = {key: value.to(device, non_blocking=True) for key, value in batch.items()}
    logits = model(batch["input_ids"], batch["attention_mask"])
    loss = nn.functional.cross_entropy(logits, batch["labels"])
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print(loss.item())

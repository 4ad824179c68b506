# the embedding layer built apart from the model and never moved: CPU weight, GPU token ids
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
embed = nn.Embedding(100, 16)
head = nn.Linear(16, 2).to(device)
opt = torch.optim.SGD([*embed.parameters(), *head.parameters()], lr=0.1)
tokens, labels = torch.randint(0, 100, (32, 6)), torch.randint(0, 2, (32,))
for i in range(0, 32, 8):
    x, y = tokens[i:i + 8].to(device), labels[i:i + 8].to(device)
    logits = head(embed(x).mean(1))  # BUG-LINE
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

# the embedding layer moved with the rest of the model
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
embed = nn.Embedding(100, 16).to(device)
head = nn.Linear(16, 2).to(device)
opt = torch.optim.SGD([*embed.parameters(), *head.parameters()], lr=0.1)
tokens, labels = torch.randint(0, 100, (32, 6)), torch.randint(0, 2, (32,))
for i in range(0, 32, 8):
    x, y = tokens[i:i + 8].to(device), labels[i:i + 8].to(device)
    logits = head(embed(x).mean(1))
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())

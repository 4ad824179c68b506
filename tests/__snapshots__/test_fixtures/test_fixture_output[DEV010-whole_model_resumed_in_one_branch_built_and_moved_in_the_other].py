"""NCF (zhrlove/NCF_1): the script resumes from a whole pickled model when one exists, and
otherwise builds the model and moves it with `.cuda()`. Only the built model is moved, so the
resumed one must load onto the device the batches go to: `map_location="cpu"` would leave it
on the CPU while the batches are on the GPU."""
import os
import tempfile

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class NCF(nn.Module):
    def __init__(self, users, items, dim=8):
        super().__init__()
        self.user = nn.Embedding(users, dim)
        self.item = nn.Embedding(items, dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, user, item):
        return torch.sigmoid(self.out(self.user(user) * self.item(item))).view(-1)


checkpoint = os.path.join(tempfile.mkdtemp(), "model.pt")
if os.path.exists(checkpoint):
    model = torch.load(checkpoint, weights_only=False, map_location=device)
else:
    model = NCF(10, 20)
    model.to(device)
loss_function = nn.BCELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
batches = [{"user": torch.randint(0, 10, (4,)), "item": torch.randint(0, 20, (4,)), "label": torch.rand(4)}]
for epoch in range(2):
    for batch_data in batches:
        user = batch_data["user"].long().to(device)
        item = batch_data["item"].long().to(device)
        label = batch_data["label"].float().to(device)
        prediction = model(user, item)
        loss = loss_function(prediction, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
torch.save(model, checkpoint)
print(round(loss.item(), 4))

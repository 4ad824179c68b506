"""Resume training from a checkpoint dict, word_language_model style (--resume); the
CPU-only failure is the one reported in e.g. dwofk/fast-depth#20 and yunjey/pytorch-tutorial#249."""
import argparse
import os
import tempfile

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--resume", default="")
args = parser.parse_args([])

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TinyRNN(nn.Module):
    def __init__(self, ntoken=20, nhid=8):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, nhid)
        self.rnn = nn.GRU(nhid, nhid, batch_first=True)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens):
        output, _ = self.rnn(self.encoder(tokens))
        return self.decoder(output)


def earlier_run():
    """Stands in for the training run that wrote the checkpoint (on a GPU machine)."""
    trained = TinyRNN().to(device)
    path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    torch.save({"model": trained.state_dict(), "optimizer": torch.optim.SGD(trained.parameters(), lr=0.1).state_dict(), "epoch": 3}, path)
    return path


args.resume = args.resume or earlier_run()
model = TinyRNN().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

# Resuming: on a laptop without a GPU this used to die with
# "Attempting to deserialize object on a CUDA device".
checkpoint = torch.load(args.resume, weights_only=True, map_location=device)
model.load_state_dict(checkpoint["model"])
optimizer.load_state_dict(checkpoint["optimizer"])
start_epoch = checkpoint["epoch"] + 1

tokens = torch.randint(0, 20, (2, 5)).to(device)
for epoch in range(start_epoch, start_epoch + args.epochs):
    optimizer.zero_grad()
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens.reshape(-1))
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())

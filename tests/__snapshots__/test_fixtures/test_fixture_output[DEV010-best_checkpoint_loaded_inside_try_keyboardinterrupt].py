"""Trains, keeps its best checkpoints, and reloads the newest one in the folder for the test
set (which may come from an earlier run on a GPU machine), all inside `try: ... except
KeyboardInterrupt:` so that Ctrl-C stops training early, as text-classification scripts do.
That handler does not catch what a GPU checkpoint raises on a CPU-only machine, so the load
still needs `map_location`."""
import glob
import os
import tempfile

import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(16, 3).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
save_dir = tempfile.mkdtemp()

try:
    best = float("inf")
    for step in range(5):
        inputs, labels = torch.randn(8, 16).to(device), torch.randint(0, 3, (8,)).to(device)
        loss = nn.functional.cross_entropy(model(inputs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < best:
            best = loss.item()
            torch.save(model.state_dict(), os.path.join(save_dir, f"best_{step}.pt"))
    best_path = max(glob.glob(os.path.join(save_dir, "best_*.pt")), key=os.path.getmtime)
    model.load_state_dict(torch.load(best_path, weights_only=True, map_location=device))
    print("best loss", best)
except KeyboardInterrupt:
    print("stopped early")

# .numpy() on a model output
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
with torch.no_grad():
    out = model(torch.randn(3, 4).to(device))
preds = out.argmax(1).numpy()  # BUG-LINE
print(preds)

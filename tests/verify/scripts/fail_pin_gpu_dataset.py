# pinning a dataset that already lives on the GPU
import torch
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
X, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
ds = TensorDataset(X.to(device), y.to(device))
loader = DataLoader(ds, batch_size=4, pin_memory=True)
for xb, yb in loader:  # BUG-LINE
    print(xb.shape)

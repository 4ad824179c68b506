"""Why `dataset_placement = "pinned"` is devfix's default: time one epoch three ways.

A small MLP trains for one epoch over a `TensorDataset` on a GPU with
  (a) pinned:    CPU tensors, `DataLoader(pin_memory=True)`, `.to(device, non_blocking=True)`
                 in the loop (what DEV004/DEV005/DEV006 write by default);
  (b) unpinned:  CPU tensors, plain `DataLoader`, `.to(device)` in the loop;
  (c) device:    the tensors moved to the GPU once, before the dataset is built, plain loader
                 (`dataset_placement = "device"`, for small in-memory data).
Each variant runs a warm-up epoch, then the best of `--repeats` timed epochs; the ratios
printed are measured in this one run. Without CUDA it says so and exits 0.

    python benchmarks/pinned_vs_unpinned.py [--samples 200000] [--features 512] [--batch-size 1024]
"""

from __future__ import annotations

import argparse
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def make_model(features: int, device: torch.device) -> nn.Module:
    return nn.Sequential(nn.Linear(features, 1024), nn.ReLU(), nn.Linear(1024, 10)).to(device)


def epoch(model, optimizer, loader, device, non_blocking: bool) -> None:
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        x, y = x.to(device, non_blocking=non_blocking), y.to(device, non_blocking=non_blocking)
        loss = criterion(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()


def timed(name, X, y, device, args, *, pin: bool, on_device: bool) -> float:
    if on_device:
        X, y = X.to(device), y.to(device)
    loader = DataLoader(TensorDataset(X, y), batch_size=args.batch_size, shuffle=True, pin_memory=pin)
    model = make_model(X.size(1), device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    epoch(model, optimizer, loader, device, pin)  # warm-up: allocator, kernels, pinned pool
    best = float("inf")
    for _ in range(args.repeats):
        start = time.perf_counter()
        epoch(model, optimizer, loader, device, pin)
        best = min(best, time.perf_counter() - start)
    print(f"  ({name}) {best * 1000:9.1f} ms / epoch")
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("pinned_vs_unpinned: needs a CUDA GPU (torch.cuda.is_available() is False); nothing measured.")
        return 0
    device = torch.device("cuda")
    torch.manual_seed(0)
    X = torch.randn(args.samples, args.features)
    y = torch.randint(0, 10, (args.samples,))
    print(
        f"{torch.cuda.get_device_name()} | torch {torch.__version__} | {args.samples} x {args.features} floats, batch {args.batch_size}"
    )
    pinned = timed("a: pinned + non_blocking", X, y, device, args, pin=True, on_device=False)
    unpinned = timed("b: unpinned", X, y, device, args, pin=False, on_device=False)
    on_device = timed("c: data on the device", X, y, device, args, pin=False, on_device=True)
    print(f"unpinned / pinned    = {unpinned / pinned:.2f}x")
    print(f"pinned / on-device   = {pinned / on_device:.2f}x")
    print(f"unpinned / on-device = {unpinned / on_device:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

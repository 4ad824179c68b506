"""A script that imports torch inside its entry point, as some repositories do to keep
`--help` fast. A device declared at the top of `main` would come before that import."""
import argparse
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args([])

    import torch
    import torch.nn as nn

    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.steps):
        x = torch.randn(8, 4).to(device)
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())


if __name__ == "__main__":
    main()

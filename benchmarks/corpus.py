"""A seeded generator of a realistic corpus for benchmarks/bench.py.

    python benchmarks/corpus.py OUT_DIR --files 1000 [--seed 0]

The same seed and size give the same bytes on every machine. The corpus has three folders,
so the benchmark can time each kind alone:

- `clean/`: torch code in the style of the official pytorch/examples (one `device`
  declaration, the model and every batch moved, checkpoints loaded with `map_location`):
  devfix finds nothing there. Training scripts, model files, dataset modules, and multi-file
  projects (`proj_N/` with `models.py`, `data.py`, a torch-free `utils.py` and `train.py`
  importing them).
- `buggy/`: the same shapes with the device bugs devfix fixes (a hard-coded `.cuda()`, a
  model or a batch never moved, `torch.load` without `map_location`, `.numpy()` on a GPU
  tensor), one to three per file.
- `plain/`: Python that has nothing to do with torch (command-line tools, text processing,
  small classes): what a monorepo holds beside its models.

The sizes are chosen so a third of the files import torch: `files // 6` clean, `files // 6`
buggy (projects count their four files), the rest plain.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

LAYER_SIZES = (16, 32, 64, 128, 256, 512)
ACTIVATIONS = ("F.relu", "torch.tanh", "torch.sigmoid", "F.gelu")
OPTIMIZERS = (
    "optim.SGD(model.parameters(), lr={lr}, momentum=0.9)",
    "optim.Adam(model.parameters(), lr={lr})",
    "optim.AdamW(model.parameters(), lr={lr}, weight_decay=1e-4)",
)
WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "record",
    "item",
    "entry",
    "token",
    "batch",
    "frame",
    "sample",
    "score",
    "weight",
    "label",
    "feature",
    "window",
    "chunk",
    "block",
    "node",
    "edge",
)


class Writer:
    """Names and numbers from one seeded random generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def name(self, prefix: str = "") -> str:
        return prefix + self.rng.choice(WORDS) + str(self.rng.randrange(100))

    def model_class(self, name: str) -> str:
        """An nn.Module with a few linear or conv layers and a forward."""
        rng = self.rng
        sizes = [rng.choice(LAYER_SIZES) for _ in range(rng.randint(2, 5))]
        conv = rng.random() < 0.4
        lines = [
            f"class {name}(nn.Module):",
            f'    """A {len(sizes)}-layer network."""',
            "",
            f"    def __init__(self, in_features={sizes[0]}, num_classes={rng.choice((2, 10, 100))}):",
            "        super().__init__()",
        ]
        if conv:
            lines += [
                f"        self.conv1 = nn.Conv2d(3, {sizes[0]}, kernel_size=3, padding=1)",
                f"        self.bn1 = nn.BatchNorm2d({sizes[0]})",
                "        self.pool = nn.AdaptiveAvgPool2d(1)",
            ]
        for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
            lines.append(f"        self.fc{i} = nn.Linear({a}, {b})")
        lines += [
            f"        self.head = nn.Linear({sizes[-1]}, num_classes)",
            f"        self.dropout = nn.Dropout({rng.choice((0.1, 0.25, 0.5))})",
            "",
            "    def forward(self, x):",
        ]
        if conv:
            lines += ["        x = self.pool(F.relu(self.bn1(self.conv1(x))))", "        x = torch.flatten(x, 1)"]
        act = rng.choice(ACTIVATIONS)
        for i in range(len(sizes) - 1):
            lines.append(f"        x = {act}(self.fc{i}(x))")
        lines += ["        x = self.dropout(x)", "        return self.head(x)", ""]
        return "\n".join(lines) + "\n"

    def dataset_class(self, name: str) -> str:
        rng = self.rng
        return "\n".join(
            [
                f"class {name}(Dataset):",
                f'    """Synthetic samples: {rng.choice(WORDS)} features and an integer label."""',
                "",
                f"    def __init__(self, size={rng.choice((256, 1000, 5000))}, features={rng.choice(LAYER_SIZES)}, transform=None):",
                "        self.data = torch.randn(size, features)",
                f"        self.targets = torch.randint(0, {rng.choice((2, 10))}, (size,))",
                "        self.transform = transform",
                "",
                "    def __len__(self):",
                "        return len(self.data)",
                "",
                "    def __getitem__(self, index):",
                "        sample = self.data[index]",
                "        if self.transform is not None:",
                "            sample = self.transform(sample)",
                "        return sample, self.targets[index]",
                "",
            ]
        )

    def helpers(self) -> str:
        """Torch-free helpers, as a utils.py holds them."""
        rng = self.rng
        meter = self.name("Meter").capitalize()
        return "\n".join(
            [
                "import json",
                "import os",
                "import time",
                "",
                "",
                f"class {meter}:",
                '    """Computes and stores the average and current value."""',
                "",
                "    def __init__(self, name, fmt=':f'):",
                "        self.name = name",
                "        self.fmt = fmt",
                "        self.reset()",
                "",
                "    def reset(self):",
                "        self.val = self.avg = self.sum = self.count = 0",
                "",
                "    def update(self, val, n=1):",
                "        self.val = val",
                "        self.sum += val * n",
                "        self.count += n",
                "        self.avg = self.sum / self.count",
                "",
                "",
                f"def save_config(config, folder='{rng.choice(WORDS)}'):",
                "    os.makedirs(folder, exist_ok=True)",
                "    with open(os.path.join(folder, 'config.json'), 'w') as handle:",
                "        json.dump(config, handle, indent=2)",
                "",
                "",
                "def timestamp():",
                "    return time.strftime('%Y-%m-%d %H:%M:%S')",
                "",
            ]
        ), meter

    def train_script(
        self,
        bugs: list[str],
        model_import: str = "",
        dataset_import: str = "",
        model: str = "",
        dataset: str = "",
        helpers_import: str = "",
        meter: str = "",
    ) -> str:
        """A training script: argparse, data, model, optimizer, train and test loops, a
        checkpoint. `bugs` picks which device bugs it has (empty: correct)."""
        rng = self.rng
        epochs = rng.choice((1, 5, 10, 14))
        lr = rng.choice((0.1, 0.01, 1e-3))
        batch = rng.choice((32, 64, 128))
        head = [
            "import argparse",
            "",
            "import torch",
            "import torch.nn as nn",
            "import torch.nn.functional as F",
            "import torch.optim as optim",
            "from torch.utils.data import DataLoader, Dataset",
        ]
        if model_import:
            head.append(model_import)
        if dataset_import:
            head.append(dataset_import)
        if helpers_import:
            head.append(helpers_import)
        parts = ["\n".join(head) + "\n\n"]
        if not model:
            model = self.name("Net").capitalize()
            parts.append(self.model_class(model) + "\n\n")
        if not dataset:
            dataset = self.name("Data").capitalize()
            parts.append(self.dataset_class(dataset) + "\n\n")
        move_model = "hard-coded-cuda" not in bugs and "model-not-moved" not in bugs
        move_batch = "batch-not-moved" not in bugs
        train = [
            "def train(args, model, device, train_loader, optimizer, epoch):",
            "    model.train()",
            "    for batch_idx, (data, target) in enumerate(train_loader):",
        ]
        if move_batch:
            train.append("        data, target = data.to(device), target.to(device)")
        train += [
            "        optimizer.zero_grad()",
            "        output = model(data)",
            "        loss = F.cross_entropy(output, target)",
            "        loss.backward()",
            "        optimizer.step()",
            "        if batch_idx % args.log_interval == 0:",
            "            print('Train Epoch: {} [{}/{}]\\tLoss: {:.6f}'.format(",
            "                epoch, batch_idx * len(data), len(train_loader.dataset), loss.item()))",
            "",
            "",
            "def test(model, device, test_loader):",
            "    model.eval()",
            "    test_loss = 0",
            "    correct = 0",
            "    with torch.no_grad():",
            "        for data, target in test_loader:",
            "            data, target = data.to(device), target.to(device)",
            "            output = model(data)",
            "            test_loss += F.cross_entropy(output, target, reduction='sum').item()",
            "            pred = output.argmax(dim=1, keepdim=True)",
        ]
        if "host-conversion" in bugs:
            train.append("            correct += (pred.view(-1).numpy() == target.cpu().numpy()).sum()")
        else:
            train.append("            correct += pred.eq(target.view_as(pred)).sum().item()")
        train += [
            "    test_loss /= len(test_loader.dataset)",
            "    print('Test set: Average loss: {:.4f}, Accuracy: {}/{}'.format(",
            "        test_loss, correct, len(test_loader.dataset)))",
            "",
            "",
        ]
        parts.append("\n".join(train) + "\n")
        main = [
            "def main():",
            f"    parser = argparse.ArgumentParser(description='{model} training')",
            f"    parser.add_argument('--batch-size', type=int, default={batch})",
            f"    parser.add_argument('--epochs', type=int, default={epochs})",
            f"    parser.add_argument('--lr', type=float, default={lr})",
            "    parser.add_argument('--log-interval', type=int, default=10)",
            "    parser.add_argument('--save-model', action='store_true')",
            "    parser.add_argument('--resume', default='')",
            "    args = parser.parse_args()",
            "    torch.manual_seed(1)",
            "",
        ]
        if "hard-coded-cuda" in bugs:
            main.append("    device = 'cuda'")
        else:
            main.append("    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')")
        main += [
            "    kwargs = {'batch_size': args.batch_size}",
            f"    train_loader = DataLoader({dataset}(), shuffle=True, **kwargs)",
            f"    test_loader = DataLoader({dataset}(size=256), **kwargs)",
            "",
        ]
        if "hard-coded-cuda" in bugs:
            main.append(f"    model = {model}().cuda()")
        elif move_model:
            main.append(f"    model = {model}().to(device)")
        else:
            main.append(f"    model = {model}()")
        main.append("    optimizer = " + rng.choice(OPTIMIZERS).format(lr=lr))
        main.append(
            f"    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma={rng.choice((0.7, 0.9))})"
        )
        if "load-map-location" in bugs:
            main += ["    if args.resume:", "        model.load_state_dict(torch.load(args.resume))"]
        else:
            main += [
                "    if args.resume:",
                "        model.load_state_dict(torch.load(args.resume, map_location=device))",
            ]
        if meter:
            main.append(f"    meter = {meter}('loss')")
        main += [
            "    for epoch in range(1, args.epochs + 1):",
            "        train(args, model, device, train_loader, optimizer, epoch)",
            "        test(model, device, test_loader)",
            "        scheduler.step()",
            "",
            "    if args.save_model:",
            f"        torch.save(model.state_dict(), '{model.lower()}.pt')",
            "",
            "",
            "if __name__ == '__main__':",
            "    main()",
            "",
        ]
        parts.append("\n".join(main))
        return "".join(parts)

    def plain_module(self) -> str:
        """Python without torch: a small command-line tool over text and JSON."""
        rng = self.rng
        cls = self.name("Record").capitalize()
        functions = []
        for _ in range(rng.randint(2, 6)):
            fname = self.name("parse_")
            word = rng.choice(WORDS)
            functions.append(
                "\n".join(
                    [
                        f"def {fname}(lines, limit={rng.randrange(1, 100)}):",
                        f'    """Collect the {word} fields of the first `limit` lines."""',
                        "    found = []",
                        "    for number, line in enumerate(lines):",
                        "        if number >= limit:",
                        "            break",
                        "        parts = line.strip().split(',')",
                        f"        if len(parts) > {rng.randrange(1, 5)} and parts[0].startswith('{word[:2]}'):",
                        f"            found.append({cls}(parts[0], float(parts[-1] or 0)))",
                        "    return sorted(found, key=lambda record: record.value)",
                        "",
                    ]
                )
            )
        return "\n".join(
            [
                '"""A small tool over CSV-like text (generated for the benchmark)."""',
                "",
                "import argparse",
                "import collections",
                "import json",
                "import sys",
                "from dataclasses import dataclass",
                "",
                "",
                "@dataclass",
                f"class {cls}:",
                "    name: str",
                "    value: float",
                "",
                "    def scaled(self, factor):",
                f"        return {cls}(self.name, self.value * factor)",
                "",
                "",
                "\n\n".join(functions),
                "",
                "def summarise(records):",
                "    counts = collections.Counter(record.name for record in records)",
                "    return {name: count for name, count in counts.most_common(10)}",
                "",
                "",
                "def main(argv=None):",
                "    parser = argparse.ArgumentParser()",
                "    parser.add_argument('path')",
                "    parser.add_argument('--json', action='store_true')",
                "    args = parser.parse_args(argv)",
                "    with open(args.path) as handle:",
                "        lines = handle.readlines()",
                "    records = []",
                "    for line in lines:",
                "        records.extend(" + functions[0].split("(")[0][4:] + "([line]))",
                "    summary = summarise(records)",
                "    if args.json:",
                "        json.dump(summary, sys.stdout)",
                "    else:",
                "        for name, count in summary.items():",
                "            print(f'{name}: {count}')",
                "",
                "",
                "if __name__ == '__main__':",
                "    main()",
                "",
            ]
        )


BUGS = ("hard-coded-cuda", "model-not-moved", "batch-not-moved", "load-map-location", "host-conversion")


def generate(root: Path, files: int, seed: int = 0) -> dict[str, int]:
    """Write the corpus under `root`; returns the number of files of each kind."""
    writer = Writer(seed)
    rng = writer.rng
    counts = {"clean": 0, "buggy": 0, "plain": 0}
    torch_files = max(2, files // 3)
    for kind, share in (("clean", torch_files // 2), ("buggy", torch_files - torch_files // 2)):
        folder = root / kind
        made = 0
        index = 0
        while made < share:
            index += 1
            bugs = [] if kind == "clean" else rng.sample(BUGS, rng.randint(1, 3))
            shape = rng.random()
            if shape < 0.15 and share - made >= 4:
                project = folder / f"proj_{index}"
                project.mkdir(parents=True, exist_ok=True)
                model, dataset = writer.name("Net").capitalize(), writer.name("Data").capitalize()
                header = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                (project / "models.py").write_text(header + "\n\n" + writer.model_class(model))
                (project / "data.py").write_text(
                    "import torch\nfrom torch.utils.data import Dataset\n\n\n" + writer.dataset_class(dataset)
                )
                helpers, meter = writer.helpers()
                (project / "utils.py").write_text(helpers)
                (project / "train.py").write_text(
                    writer.train_script(
                        bugs,
                        f"from models import {model}",
                        f"from data import {dataset}",
                        model,
                        dataset,
                        f"from utils import {meter}, timestamp",
                        meter,
                    )
                )
                made += 4
            elif shape < 0.35:
                (folder / f"model_{index}.py").parent.mkdir(parents=True, exist_ok=True)
                name = writer.name("Net").capitalize()
                (folder / f"model_{index}.py").write_text(
                    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                    + writer.model_class(name)
                )
                made += 1
            elif shape < 0.45 and kind == "clean":
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"dataset_{index}.py").write_text(
                    "import torch\nfrom torch.utils.data import Dataset\n\n\n"
                    + writer.dataset_class(writer.name("Data").capitalize())
                )
                made += 1
            else:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"train_{index}.py").write_text(writer.train_script(bugs))
                made += 1
        counts[kind] = made
    plain = root / "plain"
    plain.mkdir(parents=True, exist_ok=True)
    counts["plain"] = max(0, files - counts["clean"] - counts["buggy"])
    for index in range(counts["plain"]):
        sub = plain / f"pkg_{index // 50}"
        sub.mkdir(exist_ok=True)
        (sub / f"tool_{index}.py").write_text(writer.plain_module())
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(generate(args.out, args.files, args.seed))


if __name__ == "__main__":
    main()

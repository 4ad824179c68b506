# every cross-device indexing case of docs/verify.md's table, one per run:
# `indexing_cases.py CASE` runs one case, `indexing_cases.py allowed` runs all allowed ones
import sys

import torch
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
cpu = torch.randn(5, 4)
gpu = cpu.to(device)
cpu_index, gpu_index = torch.tensor([0, 2]), torch.tensor([0, 2]).to(device)
cpu_scalar, gpu_scalar = torch.tensor(1), torch.tensor(1).to(device)
cpu_mask = torch.tensor([True, False, True, False, True])
gpu_mask = cpu_mask.to(device)
cpu_rows, gpu_rows = torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long).to(device)
cpu_src, gpu_src = torch.ones(2, 4), torch.ones(2, 4).to(device)


def put(t, index, value):
    t = t.clone()
    t[index] = value
    return t


ALLOWED = {
    "gpu[cpu_index]": lambda: gpu[cpu_index],
    "gpu[gpu_index]": lambda: gpu[gpu_index],
    "gpu[cpu_mask]": lambda: gpu[cpu_mask],
    "cpu[gpu_scalar]": lambda: cpu[gpu_scalar],
    "index_select(gpu, gpu_index)": lambda: torch.index_select(gpu, 0, gpu_index),
    "gather(gpu, gpu_rows)": lambda: gpu.gather(0, gpu_rows),
    "scatter_(gpu, gpu_rows, 1.0)": lambda: gpu.clone().scatter_(0, gpu_rows, 1.0),
    "take(gpu, gpu_index)": lambda: torch.take(gpu, gpu_index),
    "embedding(gpu_index, gpu)": lambda: F.embedding(gpu_index, gpu),
    "gpu[cpu_index] = 1.0": lambda: put(gpu, cpu_index, 1.0),
    "gpu[gpu_index] = cpu_scalar": lambda: put(gpu, gpu_index, torch.tensor(1.0)),
    "cpu[gpu_index] = cpu_src": lambda: put(cpu, gpu_index, cpu_src),
    "gpu[gpu_mask] = one-element cpu": lambda: put(gpu, gpu_mask, torch.tensor([1.0])),
}

RAISE = {
    "cpu[gpu_index]": lambda: cpu[gpu_index],
    "cpu[gpu_mask]": lambda: cpu[gpu_mask],
    "index_select(gpu, cpu_index)": lambda: torch.index_select(gpu, 0, cpu_index),
    "index_select(gpu, cpu_scalar)": lambda: gpu.index_select(0, cpu_scalar),
    "index_select(cpu, gpu_index)": lambda: cpu.index_select(0, gpu_index),
    "gather(gpu, cpu_rows)": lambda: torch.gather(gpu, 0, cpu_rows),
    "scatter_(gpu, cpu_rows, 1.0)": lambda: gpu.clone().scatter_(0, cpu_rows, 1.0),
    "scatter(gpu, gpu_rows, cpu_src)": lambda: torch.scatter(gpu, 0, gpu_rows, cpu_src),
    "scatter_add_(gpu, gpu_rows, cpu_src)": lambda: gpu.clone().scatter_add_(0, gpu_rows, cpu_src),
    "take(cpu, gpu_index)": lambda: cpu.take(gpu_index),
    "embedding(cpu_index, gpu)": lambda: F.embedding(cpu_index, gpu),
    "gpu[cpu_index] = cpu_src": lambda: put(gpu, cpu_index, cpu_src),
}

if __name__ == "__main__":
    case = sys.argv[1]
    if case == "allowed":
        for name, run in ALLOWED.items():
            print(name, "->", run().device)
    else:
        RAISE[case]()

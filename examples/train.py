#!/usr/bin/env python3
"""A small PyTorch training job for trying torchmem.

Trains a little MLP on a synthetic classification task with a DataLoader
(worker processes included), prints the loss per epoch and the number of
optimizer steps. Runs on CPU torch in about half a minute; uses the GPU
when one is there. The output is deterministic, so a bare run and a run
under `torchmem run` print the same lines.

    python3 examples/train.py --epochs 4
    torchmem run --memory-max 2G -- python3 examples/train.py

--grow-mb N makes every step keep N MiB more host memory (a leak), to see
torchmem warn near the limit and explain the OOM kill.
"""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Synthetic(Dataset):
    """Points from 10 Gaussian blobs; item i is always the same."""

    def __init__(self, n, dim, classes, seed):
        g = torch.Generator().manual_seed(seed)
        self.centers = torch.randn(classes, dim, generator=g) * 0.6
        self.labels = torch.randint(0, classes, (n,), generator=g)
        self.noise = torch.randn(n, dim, generator=g)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        y = self.labels[i]
        return self.centers[y] + self.noise[i], y


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--samples", type=int, default=40000)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--grow-mb", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="only the final line")
    p.add_argument("--step-time", action="store_true", help="print the median optimizer step time (benchmarks)")
    a = p.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    data = Synthetic(a.samples, 64, 10, seed=1)
    loader = DataLoader(data, batch_size=a.batch_size, shuffle=True, num_workers=a.workers,
                        generator=torch.Generator().manual_seed(2), persistent_workers=a.workers > 0)
    model = nn.Sequential(nn.Linear(64, a.hidden), nn.ReLU(), nn.Linear(a.hidden, a.hidden),
                          nn.ReLU(), nn.Linear(a.hidden, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    hoard, steps, times, cpu = [], 0, [], []
    for epoch in range(a.epochs):
        total, n = 0.0, 0
        for x, y in loader:
            t0, c0 = time.perf_counter(), time.process_time()
            x, y = x.to(dev), y.to(dev)
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            steps += 1
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            total += loss.item() * len(y)
            n += len(y)
            if a.grow_mb:
                hoard.append(torch.ones(a.grow_mb << 18))  # float32: MiB * 2**18 elements
        if not a.quiet:
            print(f"epoch {epoch + 1}/{a.epochs} loss {total / n:.4f}", flush=True)
    print(f"done: {steps} optimizer steps on {dev}", flush=True)
    if a.step_time and times:
        times.sort()
        cpu.sort()
        print(f"median step time: {times[len(times) // 2] * 1000:.3f} ms", flush=True)
        print(f"median step cpu: {cpu[len(cpu) // 2] * 1000:.3f} ms", flush=True)


if __name__ == "__main__":
    main()

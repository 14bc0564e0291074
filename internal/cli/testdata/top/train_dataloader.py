"""A small real PyTorch training loop with a multi-worker DataLoader.

Usage: python3 train_dataloader.py WORKERS SECONDS

Prints "ready <pid>" once every worker has produced a batch, then keeps
training until SECONDS have passed (0: until killed). Used by torchmem's
tests and benchmarks to get a real job: one main process plus WORKERS
forked DataLoader workers, all with libtorch mapped.
"""
import os
import sys
import time

import warnings

import torch
from torch.utils.data import DataLoader, Dataset


class Random(Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(64, generator=g), torch.randint(0, 10, (), generator=g)


def main():
    warnings.filterwarnings("ignore", message=".*worker processes in total.*")
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    # Some resident state in the main process, as a real job has.
    keep = torch.ones(8 << 20)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Random(), batch_size=32, num_workers=workers,
                        prefetch_factor=2 if workers else None, persistent_workers=workers > 0)
    start = time.time()
    it = iter(loader)
    # Pull enough batches that every worker has run.
    for _ in range(max(workers, 1) * 2):
        x, y = next(it)
    print("ready", os.getpid(), flush=True)
    step = 0
    while seconds == 0 or time.time() - start < seconds:
        x, y = next(it)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        time.sleep(0.05)
    print("done", step, float(keep.sum()), flush=True)


if __name__ == "__main__":
    main()

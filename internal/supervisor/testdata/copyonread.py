# A DataLoader over a dataset the parent built before forking its workers
# (TestCopyOnReadRealDataLoader). "list": a Python list of (small numpy
# array, label) tuples, so reading an item writes its reference counts
# (and the worker's garbage collector writes every tuple's header) and the
# kernel copies the pages (copy-on-read). "memmap": one numpy memmap of the same
# data; items are views of clean file pages, nothing is written.
# usage: copyonread.py list|memmap ITEMS EPOCHS [FILE]
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

mode, n, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dim = 64
if mode == "list":
    data = [(np.full(dim, i, dtype=np.float32), i % 10) for i in range(n)]
else:
    mm = np.lib.format.open_memmap(sys.argv[4], mode="w+", dtype=np.float32, shape=(n, dim))
    mm[:] = 1
    mm.flush()
    del mm
    data = np.load(sys.argv[4], mmap_mode="r")
    labels = np.arange(n) % 10


class DS(Dataset):
    def __len__(self):
        return n

    def __getitem__(self, i):
        if mode == "list":
            return data[i]
        return data[i], labels[i]


# shuffle=False: a shuffling sampler makes a list of n Python ints in the
# parent every epoch (torch.randperm(n).tolist()), as large as the small
# arrays' headers the workers copy here; with real datasets it is small.
dl = DataLoader(DS(), batch_size=512, num_workers=2, persistent_workers=True, shuffle=False)
total = 0.0
for epoch in range(epochs):
    for b in dl:
        total += float(b[0][0, 0])
print("done", epochs, total > 0)

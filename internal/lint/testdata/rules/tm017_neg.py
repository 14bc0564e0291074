# gc.collect() where it belongs: periodic, in the training loop, or in
# __init__ after building the index.
import gc

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class SliceDataset(Dataset):
    def __init__(self, paths):
        self.paths = np.array(sorted(paths))
        gc.collect()

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        if idx % 10000 == 0:
            gc.collect()
        return torch.load(self.paths[idx])


for step, batch in enumerate(DataLoader(SliceDataset([]), num_workers=2)):
    if step % 1000 == 0:
        gc.collect()


class OncePerEpoch(torch.utils.data.IterableDataset):
    def __init__(self, source):
        self.source = source

    def __iter__(self):
        gc.collect()
        for sample in self.source:
            yield sample


once = torch.utils.data.DataLoader(OncePerEpoch([]), num_workers=4)

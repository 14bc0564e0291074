# gc.collect() per sample, as in loaders "fixed" for growing worker memory.
import gc

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class SliceDataset(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        arr = np.load(self.paths[idx])
        gc.collect()  # want: TM017
        return torch.from_numpy(arr)


loader = DataLoader(SliceDataset(["a.npy"]), batch_size=4, num_workers=4)


class StreamDataset(torch.utils.data.IterableDataset):
    def __init__(self, source):
        self.source = source

    def __iter__(self):
        for sample in self.source:
            gc.collect()  # want: TM017
            yield sample


stream = torch.utils.data.DataLoader(StreamDataset([]), num_workers=4)

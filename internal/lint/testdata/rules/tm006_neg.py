import json

import numpy as np
from torch.utils.data import DataLoader, Dataset


class PackedDataset(Dataset):
    def __init__(self, path):
        with open(path) as f:
            records = json.load(f)
        self.offsets = np.array([r["offset"] for r in records], dtype=np.int64)
        self.classes = ["cat", "dog"]

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, idx):
        return self.offsets[idx]


class InProcessDataset(Dataset):
    def __init__(self, path):
        self.lines = [l.strip() for l in open(path)]

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, idx):
        return self.lines[idx]


train = DataLoader(PackedDataset("a.json"), batch_size=8, num_workers=4)
debug = DataLoader(InProcessDataset("b.txt"), batch_size=8, num_workers=0)

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


class LabelNames(Dataset):
    def __init__(self, root, samples):
        self.classes = [d.upper() for d in sorted(root)]
        self.samples = np.asarray(samples)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        path, label = self.samples[index]
        return path, self.classes[label]


names = DataLoader(LabelNames(["a"], [("x", 0)]), num_workers=2)

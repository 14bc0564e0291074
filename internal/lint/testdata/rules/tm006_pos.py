import json

import torch
from torch.utils.data import DataLoader, Dataset


class CaptionDataset(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.records = json.load(f)  # want: TM006
        self.lines = [l.strip() for l in open(path + ".txt")]  # want: TM006
        self.items = []  # want: TM006
        for r in self.records:
            self.items.append((r["image"], r["caption"]))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        image, caption = self.items[idx]
        return self.records[idx], self.lines[idx], image, caption


def loader(path, workers):
    ds = CaptionDataset(path)
    return DataLoader(ds, batch_size=32, num_workers=workers)

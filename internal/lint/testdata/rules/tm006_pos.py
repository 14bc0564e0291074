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


class ImagesAndLabels(Dataset):
    # yolov5's LoadImagesAndLabels: paths beside one label array per image.
    def __init__(self, files, cache):
        self.im_files = sorted(x.replace("/", "\\") for x in files)  # want: TM006
        self.labels = [cache[f] for f in self.im_files]  # want: TM006

    def __len__(self):
        return len(self.im_files)

    def __getitem__(self, index):
        return self.im_files[index], self.labels[index]


class ScansByID(Dataset):
    # referit3d: a dict of scans keyed by id, looked up through each sample.
    def __init__(self, references, scans):
        self.references = references
        self.scans = {}  # want: TM006
        for scan_id, scan in scans.items():
            self.scans[scan_id] = scan

    def __len__(self):
        return len(self.references)

    def __getitem__(self, index):
        ref = self.references.iloc[index]
        return self.scans[ref["scan_id"]].pc


yolo = DataLoader(ImagesAndLabels([], {}), num_workers=8)
scans = DataLoader(ScansByID(None, {}), num_workers=8)

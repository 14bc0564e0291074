import json
import os

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


class PromptImageDataset(Dataset):
    # A LoRA fine-tuning folder: only file paths and prompts per sample.
    def __init__(self, data_dir, prompts):
        self.samples = []
        for filename in sorted(os.listdir(data_dir)):
            img_path = os.path.join(data_dir, filename)
            txt_path = img_path + ".txt"
            self.samples.append((img_path, txt_path, filename))
        self.video_paths = sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir))
        self.instance_prompts = [p.strip() for p in prompts]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        img_path, txt_path, stem = self.samples[index]
        return img_path, self.video_paths[index], self.instance_prompts[index]


class ClassLookup(Dataset):
    def __init__(self, samples, classes):
        self.samples = np.asarray(samples)
        self.class_to_idx = {c: i for i, c in enumerate(classes)}

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        rec = self.samples[index]
        return rec, self.class_to_idx[rec["category_id"]]


fine_tune = DataLoader(PromptImageDataset("d", ["a"]), num_workers=4)
lookup = DataLoader(ClassLookup([], []), num_workers=4)

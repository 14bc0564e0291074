# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pavelsuma/ames/issues/9
# pattern: h5py handle opened in __init__: 'h5py objects cannot be pickled' with num_workers > 0 under spawn
# expect: TM018
import os
import h5py
import torch
from torch.utils.data import Dataset, DataLoader

class TensorFileDataset(Dataset):
    def __init__(self, name, desc_dir, local_desc_name):
        self.name = name
        self.local_file = os.path.join(desc_dir, local_desc_name)
        self.local_storage = h5py.File(self.local_file, "r")

    def __len__(self):
        return len(self.local_storage["features"])

    def __getitem__(self, i):
        return torch.from_numpy(self.local_storage["features"][i])

loader = DataLoader(TensorFileDataset("db", "desc", "local.hdf5"), batch_size=1, num_workers=4)

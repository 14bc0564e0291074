# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/torchmd/torchmd-net/pull/84
# pattern: workers read from the same h5py file instance opened in the constructor (corrupt data); fixed by opening in get
# expect: TM018
import h5py
import torch
from torch.utils.data import Dataset, DataLoader

class HDF5(Dataset):
    def __init__(self, filename):
        self.file = h5py.File(filename, "r")
        self.index = list(range(len(self.file["types"])))

    def __len__(self):
        return len(self.index)

    def __getitem__(self, idx):
        return torch.from_numpy(self.file["pos"][idx]), torch.from_numpy(self.file["types"][idx])

loader = DataLoader(HDF5("data.h5"), batch_size=32, num_workers=6)

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/3415
# pattern: DatasetFromHDF5 opens the file in __init__: KeyErrors with multiple workers
# expect: TM018
import h5py
import torch
from torch.utils.data.dataset import Dataset

class DatasetFromHDF5(Dataset):
    def __init__(self, filename, dataset):
        h5f = h5py.File(filename, "r", swmr=True)
        self.data = h5f[dataset]
        self.h5f = h5f

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        return torch.from_numpy(self.data[index]).float()

train_loader = torch.utils.data.DataLoader(DatasetFromHDF5("x.h5", "x"), batch_size=64, num_workers=4)

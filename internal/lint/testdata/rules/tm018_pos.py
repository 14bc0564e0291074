# HDF5/LMDB handles opened in __init__ and inherited by forked workers:
# pytorch/pytorch#11887 (DeephomographyDataset: self.db = h5py.File(...) in
# __init__, wrong data or errors with num_workers > 1), pavelsuma/ames#9
# ("h5py objects cannot be pickled" under spawn).
import h5py
import lmdb
import torch
from torch.utils.data import DataLoader, Dataset


class DeephomographyDataset(Dataset):
    def __init__(self, hdf5file, imgs_key="images", labels_key="labels"):
        self.db = h5py.File(hdf5file, "r")  # want: TM018
        self.imgs_key = imgs_key
        self.labels_key = labels_key

    def __len__(self):
        return len(self.db[self.labels_key])

    def __getitem__(self, idx):
        return self.db[self.imgs_key][idx], self.db[self.labels_key][idx]


class LMDBDataset(Dataset):
    def __init__(self, root):
        self.env = lmdb.open(root, readonly=True, lock=False)  # want: TM018
        with self.env.begin() as txn:
            self.length = txn.stat()["entries"]

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        with self.env.begin() as txn:
            return torch.frombuffer(txn.get(str(i).encode()), dtype=torch.uint8)


train = DataLoader(DeephomographyDataset("train.h5"), batch_size=30, num_workers=4)
val = DataLoader(LMDBDataset("val.lmdb"), batch_size=30, num_workers=8)


class DatasetFromHDF5(Dataset):
    def __init__(self, filename, name):
        h5f = h5py.File(filename, "r", swmr=True)
        self.data = h5f[name]  # want: TM018
        self.h5f = h5f

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        return torch.from_numpy(self.data[index]).float()


local_handle = DataLoader(DatasetFromHDF5("x.h5", "x"), batch_size=64, num_workers=4)

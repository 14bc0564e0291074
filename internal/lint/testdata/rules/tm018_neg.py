# Opened lazily in the worker (the fix from pytorch/pytorch#11929 and
# Dana-Farber-AIOS/pathml#131), peeked at and closed in __init__, or read
# in the main process only.
import h5py
import lmdb
import torch
from torch.utils.data import DataLoader, Dataset


class LazyH5(Dataset):
    def __init__(self, path):
        self.file_path = path
        self.h5 = None
        with h5py.File(self.file_path, "r") as file:
            self.dataset_len = len(file["tiles"])

    def __len__(self):
        return self.dataset_len

    def __getitem__(self, ix):
        if self.h5 is None:
            self.h5 = h5py.File(self.file_path, "r")
        return torch.from_numpy(self.h5["tiles"][ix])


class PeekLMDB(Dataset):
    def __init__(self, root):
        self.root = root
        self.env = lmdb.open(root, readonly=True)
        with self.env.begin() as txn:
            self.length = txn.stat()["entries"]
        self.env.close()
        self.env = None

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        if self.env is None:
            self.env = lmdb.open(self.root, readonly=True, lock=False)
        with self.env.begin() as txn:
            return txn.get(str(i).encode())


class InMainProcess(Dataset):
    def __init__(self, path):
        self.db = h5py.File(path, "r")

    def __len__(self):
        return len(self.db["x"])

    def __getitem__(self, i):
        return self.db["x"][i]


a = DataLoader(LazyH5("a.h5"), num_workers=4)
b = DataLoader(PeekLMDB("b.lmdb"), num_workers=4)
c = DataLoader(InMainProcess("c.h5"), num_workers=0)


class ReadIntoMemory(Dataset):
    def __init__(self, filename, name):
        h5f = h5py.File(filename, "r")
        self.data = h5f[name][:]
        h5f.close()
        self.length = len(self.data)

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        return torch.from_numpy(self.data[index])


in_memory = DataLoader(ReadIntoMemory("x.h5", "x"), num_workers=4)

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/1919
# pattern: h5py.File opened in __init__; with num_workers=2 labels come back corrupted (255)
# expect: TM018
import os
import h5py
import torch
import torch.utils.data as data

class Modelnet40_V12_Dataset(data.Dataset):
    def __init__(self, data_dir, train=True):
        self.train = train
        file_path = os.path.join(data_dir, "modelnet40.h5")
        self.modelnet40_data = h5py.File(file_path)
        self.train_data = self.modelnet40_data["train"]["data"]
        self.train_labels = self.modelnet40_data["train"]["label"]

    def __getitem__(self, index):
        return torch.from_numpy(self.train_data[index]), int(self.train_labels[index])

    def __len__(self):
        return self.train_data.shape[0]

loader = data.DataLoader(Modelnet40_V12_Dataset("data"), batch_size=32, num_workers=2)

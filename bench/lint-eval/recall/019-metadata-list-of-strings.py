# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/20433
# pattern: Dataset keeps a list of 8M strings; memory grows in every worker (copy-on-read, see #13246)
# expect: TM006
import torch
from torch.utils.data import Dataset, DataLoader

class MyDataSet(Dataset):
    def __init__(self):
        self.metadata = [str(i).zfill(1024) for i in range(len(self))]

    def __len__(self):
        return 8000000

    def __getitem__(self, index):
        return self.metadata[index]

loader = DataLoader(MyDataSet(), batch_size=64, num_workers=16)

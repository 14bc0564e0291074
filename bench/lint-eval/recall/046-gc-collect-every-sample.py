# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/NVIDIA/Megatron-Energon/pull/66
# pattern: GcDataset ran gc.collect() for every sample it yields (every_n_iter=1), slowing iteration; default changed to every 10
# expect: TM017
import gc
import torch
from torch.utils.data import IterableDataset, DataLoader

class GcDataset(IterableDataset):
    def __init__(self, dataset):
        self.dataset = dataset

    def __iter__(self):
        for sample in self.dataset:
            gc.collect()
            yield sample

loader = DataLoader(GcDataset(base), batch_size=32, num_workers=8)

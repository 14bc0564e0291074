# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/4377
# pattern: TensorDataset of CUDA tensors read by DataLoader(num_workers=2): CUDA error (3) initialization error
# expect: TM007
import torch
from torch.utils.data import DataLoader, TensorDataset

features = torch.cuda.LongTensor(range(12)).view(3, 4)
labels = torch.cuda.LongTensor(range(3))
dataset = TensorDataset(features, labels)
dataloader = DataLoader(dataset, num_workers=2)
for feat, lab in dataloader:
    print(feat, lab)

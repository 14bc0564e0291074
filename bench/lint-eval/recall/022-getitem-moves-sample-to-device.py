# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/2517
# pattern: Dataset preprocesses samples on the GPU in __getitem__ (x.to(self.DEVICE)); fails in DataLoader workers
# expect: TM007
import torch
from torch.utils.data import Dataset, DataLoader

class MyDataset(Dataset):
    def __init__(self, samples, preprocess_net, device):
        self.samples = samples
        self.DEVICE = torch.device(device)
        self.net = preprocess_net.to(self.DEVICE)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        x = self.samples[i].to(self.DEVICE)
        return self.net(x)

train_loader = DataLoader(MyDataset(samples, net, "cuda"), batch_size=8, num_workers=4)

import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class CPUDataset(Dataset):
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return torch.as_tensor(self.data[idx])


class MainProcessGPUDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        return torch.zeros(2).cuda()


def collate(batch):
    return torch.stack(batch)


loader = DataLoader(CPUDataset([1, 2]), batch_size=2, num_workers=4, collate_fn=collate, pin_memory=True)
inline = DataLoader(MainProcessGPUDataset(), batch_size=2)
for x in loader:
    x = x.to(device, non_blocking=True)


class CPUDeviceArgDataset(Dataset):
    def __init__(self, samples, device):
        self.samples = samples
        self.device = torch.device(device)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i].to(self.device)


cpu_arg_loader = DataLoader(CPUDeviceArgDataset([], "cpu"), batch_size=8, num_workers=4)

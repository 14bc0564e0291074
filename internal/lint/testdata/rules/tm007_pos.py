import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GPUDataset(Dataset):
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return torch.as_tensor(self.data[idx]).cuda()  # want: TM007


def collate(batch):
    return torch.stack(batch).to(device)  # want: TM007


loader = DataLoader(GPUDataset([1, 2, 3]), batch_size=2, num_workers=2, collate_fn=collate)
loader2 = DataLoader(GPUDataset([1]), num_workers=2, collate_fn=lambda b: torch.tensor(b, device="cuda"))  # want: TM007


class DeviceArgDataset(Dataset):
    def __init__(self, samples, device):
        self.samples = samples
        self.DEVICE = torch.device(device)

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i].to(self.DEVICE)  # want: TM007


arg_loader = DataLoader(DeviceArgDataset([], "cuda"), batch_size=8, num_workers=4)

# A small DataLoader job for the live views' captures (scripts/tui-captures.sh):
# three workers hand 1 MiB batches through /dev/shm while the main process
# "trains" and keeps its last 24 batches (16 MiB each).
import time
import torch
from torch.utils.data import DataLoader, Dataset


class Batches(Dataset):
    def __len__(self):
        return 10**9

    def __getitem__(self, i):
        time.sleep(0.02)
        return torch.randn(256, 1024)


if __name__ == "__main__":
    keep = []
    loader = DataLoader(Batches(), batch_size=16, num_workers=3, persistent_workers=True, prefetch_factor=4)
    for step, batch in enumerate(loader):
        keep.append(batch.clone())  # grows step by step, for the history
        if len(keep) > 24:
            keep.pop(0)
        x = (batch * batch).mean()
        print(f"step {step} loss {float(x.mean()):.4f}", flush=True)
        time.sleep(0.1)

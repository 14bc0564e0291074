import os

from torch.utils.data import DataLoader

loader = DataLoader(range(10), batch_size=256, num_workers=2)
auto = DataLoader(range(10), num_workers=os.cpu_count())
inline = DataLoader(range(10), num_workers=0)

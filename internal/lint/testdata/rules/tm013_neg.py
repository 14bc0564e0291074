import os

from torch.utils.data import DataLoader

loader = DataLoader(range(10), batch_size=256, num_workers=2)
auto = DataLoader(range(10), num_workers=os.cpu_count())
inline = DataLoader(range(10), num_workers=0)

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int)
args = parser.parse_args()
workers = 64
workers = 2
unknown = DataLoader(range(10), num_workers=args.workers)
reassigned = DataLoader(range(10), num_workers=workers)

from torch.utils.data import DataLoader

loader = DataLoader(range(10), batch_size=256, num_workers=64)  # want: TM013 TM013
small = DataLoader(range(10), batch_size=8, num_workers=5, prefetch_factor=2)  # want: TM013

import argparse

parser = argparse.ArgumentParser()
parser.add_argument("-j", "--workers", default=48, type=int)
parser.add_argument("--batch-size", default=256, type=int)
args = parser.parse_args()
NUM_WORKERS = 96
from_args = DataLoader(range(10), batch_size=args.batch_size, num_workers=args.workers)  # want: TM013
from_const = DataLoader(range(10), num_workers=NUM_WORKERS)  # want: TM013 TM013

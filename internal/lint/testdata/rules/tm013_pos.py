from torch.utils.data import DataLoader

loader = DataLoader(range(10), batch_size=256, num_workers=64)  # want: TM013 TM013
small = DataLoader(range(10), batch_size=8, num_workers=5, prefetch_factor=2)  # want: TM013

"""torch.cuda.empty_cache() between two large tensors of different sizes:
the 30 MiB segment goes back to the driver before the 40 MiB tensor is
made (usage: empty_cache.py [keep]: keep skips the call)."""
import sys

import torch

a = torch.empty(30 << 20, dtype=torch.uint8, device="cuda")
del a
if sys.argv[1:] != ["keep"]:
    torch.cuda.empty_cache()
b = torch.empty(40 << 20, dtype=torch.uint8, device="cuda")

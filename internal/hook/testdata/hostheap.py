# A large heap of small Python objects (600-800 bytes: above pymalloc's
# 512, so glibc's malloc holds them), freed under a live object allocated
# after them, so glibc cannot shrink its heap by itself. One optimizer step
# tells the test to send cleanup; malloc_trim(0) should return the pages.
import sys
import time

import torch

heap = [b"x" * (600 + i % 200) for i in range(300000)]
pin = b"y" * 700
del heap
p = torch.nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([p], lr=0.1)
p.grad = torch.zeros(1)
opt.step()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.5)
print("done", len(pin))

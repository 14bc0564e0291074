# Drives the fake torch: steps before and after CUDA init, a cleanup window,
# then an OOM that is not caught.
import sys
import time

import torch

opt = torch.optim.optimizer.SGD()
opt.step()
time.sleep(0.3)
torch.cuda.init()
torch.cuda.allocated, torch.cuda.reserved, torch.cuda.peak = 1000, 5000, 3000
opt.step()
wait = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
time.sleep(wait)  # the test sends cleanup, reset_peaks, snapshot here
print(",".join(torch.calls))
sys.stdout.flush()
torch.oom(0, 400000286720, 150109880320, 147061866496)

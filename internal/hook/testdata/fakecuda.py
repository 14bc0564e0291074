# Drives the fake torch: steps before and after CUDA init, a cleanup window,
# then an OOM that is not caught.
import json
import os
import sys
import time

import torch

opt = torch.optim.optimizer.SGD()
opt.step()
time.sleep(0.3)
torch.cuda.init()
torch.cuda.allocated, torch.cuda.reserved, torch.cuda.peak = 1000, 5000, 3000
torch.cuda.peak_reserved = 6000
opt.step()  # step 2 peaked at 3000 allocated, 6000 reserved; the hook resets
torch.cuda.peak = 2000
opt.step()  # step 3: 2000, 5000
# The test sends cleanup, reset_peaks, snapshot here. Wait for the last of
# them, up to the given seconds: a fixed sleep lost the race on a loaded
# 2-core CI machine (only the cleanup had arrived after 1 s).
wait = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
deadline = time.time() + wait
while "dump_snapshot" not in torch.calls and time.time() < deadline:
    time.sleep(0.02)
print(",".join(torch.calls), "step_resets=%d" % torch.step_resets)
sys.stdout.flush()
# The arguments torch 2.11 passed to an OOM observer on an H200 (captured).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "oom-observer-args.json")) as f:
    args = json.load(f)
torch.oom(args["device"], args["alloc"], args["device_alloc"], args["device_free"])

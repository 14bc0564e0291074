"""A program that starts copies of itself, one per further GPU, as
Lightning's DDP does (python /abs/script.py ARGS with LOCAL_RANK=1..):
under the tracer each copy ends as it imports torch, saying so (the trace
is rank 0's), instead of running untraced on the host's GPUs and waiting
for ranks that never come. The script checks that.

usage: relaunch.py COPIES
"""
import os
import subprocess
import sys

import torch

copies = int(sys.argv[1])
if "LOCAL_RANK" not in os.environ:
    cmd = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    procs = [subprocess.Popen(cmd, env=dict(os.environ, LOCAL_RANK=str(r)), stderr=subprocess.PIPE)
             for r in range(1, copies + 1)]
    for p in procs:
        err = p.communicate(timeout=300)[1].decode(errors="replace")
        assert p.returncode == 0 and "is not run" in err, (p.returncode, err[-400:])
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64)).cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    model(torch.randn(8, 64, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()

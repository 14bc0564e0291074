"""Grow host memory steadily until the job's cgroup OOM-kills it.

usage: run_grow.py MIB_PER_SECOND

Every 100 ms appends a torch tensor of ones (every page written, so charged
to the cgroup at once) of MIB_PER_SECOND/10 MiB; torch's import is the flat
start a real job has. Used by bench/run_time_to_oom.sh.
"""
import sys
import time

import torch

rate = float(sys.argv[1])
step = 0.1
keep = []
t = time.time()
while True:
    keep.append(torch.ones(int(rate * step * (1 << 20)) // 4))
    t += step
    time.sleep(max(0.0, t - time.time()))

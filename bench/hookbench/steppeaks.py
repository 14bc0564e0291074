"""Cost of the measured step peaks in the hook's step path, with the fake
torch of internal/hook/testdata (CUDA "initialised", one device): the
optimizer-step callback (Agent.on_step) with step peaks on and off, and
take_peaks alone. Python overhead only: on a real GPU the two torch._C
calls add the allocator's own work (see bench/results/hook.md).

usage: PYTHONPATH=internal/hook/testdata/faketorch:internal/hook/python \
    python3 bench/hookbench/steppeaks.py [N]"""
import os
import sys
import timeit

import torch
from torchmem_hook import _agent, _steps

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
torch.cuda.init()
torch.cuda.allocated, torch.cuda.reserved, torch.cuda.peak = 1000, 5000, 3000


class Opt(object):
    pass


def per_step(peaks_on):
    a = _agent.Agent(torch)
    a.step_peaks_on = peaks_on
    a.cuda_devices = [0]
    a.step_gap = 3600.0  # no message after the first: the common case
    a.closed = False
    opt = Opt()
    best = min(timeit.repeat(lambda: a.on_step(opt), number=n, repeat=5))
    return best / n * 1e6


off = per_step(False)
on = per_step(True)
alone = min(timeit.repeat(lambda: _steps.take_peaks(torch, [0]), number=n, repeat=5)) / n * 1e6
print("python %s, %d steps, best of 5" % (sys.version.split()[0], n))
print("on_step, step peaks off: %.2f us" % off)
print("on_step, step peaks on:  %.2f us (+%.2f us)" % (on, on - off))
print("take_peaks alone (read 2 peaks + reset, 1 device): %.2f us" % alone)

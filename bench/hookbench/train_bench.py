# CPU training loop for the hook overhead benchmark: a 3-layer MLP, SGD,
# prints the median and mean step time (ms) of the measured steps as JSON.
import json
import statistics
import sys
import time

import torch


if len(sys.argv) > 1 and sys.argv[1] == "micro":
    # The hook's cost per optimizer step, isolated: a 1-element parameter
    # makes step() itself tiny; best of 7 repeats against machine noise.
    n = int(sys.argv[2])
    p = torch.nn.Parameter(torch.zeros(1))
    p.grad = torch.zeros(1)
    opt = torch.optim.SGD([p], lr=0.01)
    best = None
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            opt.step()
        dt = (time.perf_counter() - t0) / n
        best = dt if best is None else min(best, dt)
    print(json.dumps({"step_us": best * 1e6}))
    sys.exit(0)

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
warmup = 20
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(128, 256)
y = torch.randint(0, 10, (128,))
times = []
for i in range(steps + warmup):
    t0 = time.perf_counter()
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    if i >= warmup:
        times.append(time.perf_counter() - t0)
print(json.dumps({"median_ms": statistics.median(times) * 1e3, "mean_ms": statistics.mean(times) * 1e3, "steps": steps}))

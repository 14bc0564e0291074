"""A batch-size probe before training (yolov5's AutoBatch, written for
torchmem's tests, no code copied): forward and backward at growing batch
sizes, torch.cuda.memory_reserved() read after each, the cache emptied
between them; the batch size is fitted to what they read, and only then
is the optimizer made and the model trained. The probe's backward passes
are no training steps (no weight is updated between them), and what the
probe reads grows with the batch: the cache holds the blocks of the
forward's activations after the backward freed them.

prints: probe B RESERVED ALLOCATED per probe, then batch N
"""

import torch
import torch.nn as nn

torch.backends.cudnn.benchmark = False
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).cuda()
read = []
for b in (64, 128, 256):
    x = torch.randn(b, 256, device="cuda")
    model(x).sum().backward()
    r = torch.cuda.memory_reserved()
    print("probe %d %d %d" % (b, r, torch.cuda.memory_allocated()))
    read.append(r)
    torch.cuda.empty_cache()
model.zero_grad(set_to_none=True)
per = (read[-1] - read[0]) / (256 - 64)
batch = 512 if per > 0 else 1  # a fit needs a slope; without one, the smallest batch
print("batch %d" % batch)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for _ in range(3):
    model(torch.randn(batch, 256, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

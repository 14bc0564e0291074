"""DistributedDataParallel's other ways of running, each as argv[1] says:
no_sync (gradient accumulation: the first of two micro-batches skips the
all-reduce), find_unused (a head whose output is partly unused:
find_unused_parameters=True), static (static_graph=True), syncbn
(BatchNorm made SyncBatchNorm: its statistics gathered over the ranks,
CUDA-only kernels) or plain."""
import contextlib
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

mode = sys.argv[1]
dist.init_process_group("nccl")
model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(),
                      nn.Linear(16 * 30 * 30, 10), nn.Linear(10, 10))
if mode == "syncbn":
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = model.cuda()
kwargs = {"find_unused": dict(find_unused_parameters=True), "static": dict(static_graph=True)}.get(mode, {})
ddp = nn.parallel.DistributedDataParallel(model, device_ids=[0], **kwargs)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    for micro in range(2):
        quiet = ddp.no_sync() if mode == "no_sync" and micro == 0 else contextlib.nullcontext()
        with quiet:
            out = ddp(torch.randn(8, 3, 32, 32, device="cuda"))
            if mode == "find_unused":
                out = out[:, :5]
            out.sum().backward()
    opt.step()
    opt.zero_grad()

"""A DistributedDataParallel training script as torchrun runs it: the
tracer traces one process, so it ends at init_process_group, saying so,
with the model already on the GPU reported."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn

model = nn.Linear(512, 512).cuda()
dist.init_process_group("nccl")
ddp = nn.parallel.DistributedDataParallel(model, device_ids=[int(os.environ.get("LOCAL_RANK", 0))])
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
for _ in range(3):
    ddp(torch.randn(8, 512, device="cuda")).sum().backward()
    opt.step()

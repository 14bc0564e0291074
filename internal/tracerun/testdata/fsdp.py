"""FullyShardedDataParallel (FSDP1) in a program run without a launcher:
a world of one, FSDP's own code on the trace's tensors, nothing sharded."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

dist.init_process_group("nccl")
model = nn.Sequential(nn.Linear(512, 512), nn.Linear(512, 512)).cuda()
model = FSDP(model)
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    model(torch.randn(8, 512, device="cuda")).sum().backward()
    opt.step()

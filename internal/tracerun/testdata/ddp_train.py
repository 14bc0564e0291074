"""DistributedDataParallel as torchrun runs it, traced as rank 0 of
WORLD_SIZE: the model moved to the local rank by index, DDP with
device_ids (small buckets, so there are several), a DistributedSampler,
all_gather_object (pickled through the device: it works only when the
gathered values are known), an averaged loss and a barrier per step.

argv[1]: default, bucket_view (gradient_as_bucket_view=True: the
gradients are views into the buckets), fp16_hook (the gradients are
all-reduced in fp16 by DDP's fp16_compress_hook) or zero (AdamW's states
sharded over the ranks by ZeroRedundancyOptimizer)."""
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

mode = sys.argv[1] if len(sys.argv) > 1 else "default"
local_rank = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
world = dist.get_world_size()
assert dist.get_backend() == "nccl", dist.get_backend()  # the program's, not the trace's fake group

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256), nn.LayerNorm(256),
                      nn.Linear(256, 10)).to(local_rank)
ddp = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], bucket_cap_mb=1,
                                          gradient_as_bucket_view=mode == "bucket_view")
if mode == "fp16_hook":
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    ddp.register_comm_hook(dist.group.WORLD, default_hooks.fp16_compress_hook)

data = TensorDataset(torch.randn(512, 256), torch.randint(0, 10, (512,)))
sampler = DistributedSampler(data)
loader = DataLoader(data, batch_size=16, sampler=sampler)
sizes = [None] * world
dist.all_gather_object(sizes, {"rank": dist.get_rank(), "batches": len(loader)})
assert sizes == [{"rank": 0, "batches": 512 // world // 16}] * world, sizes

if mode == "zero":
    from torch.distributed.optim import ZeroRedundancyOptimizer

    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3)
else:
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
for x, y in loader:
    x, y = x.to(local_rank), y.to(local_rank)
    loss = F.cross_entropy(ddp(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    avg = loss.detach().clone()
    dist.all_reduce(avg, op=dist.ReduceOp.AVG)
    dist.barrier()
dist.destroy_process_group()

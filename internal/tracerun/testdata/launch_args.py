"""A script for the deprecated torch.distributed.launch without --use-env:
the launcher passes --local-rank=N (--local_rank before torch 2.0) and the
environment of a worker; the script checks both, then trains a DDP model
placed by the index it was given."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--local-rank", "--local_rank", type=int, required=True)
p.add_argument("--width", type=int, default=64)
args = p.parse_args()
assert args.local_rank == 0 and os.environ["LOCAL_RANK"] == "0", (args.local_rank, os.environ.get("LOCAL_RANK"))
assert os.environ["WORLD_SIZE"] == "6" and os.environ["LOCAL_WORLD_SIZE"] == "3", os.environ["WORLD_SIZE"]
assert torch.cuda.device_count() == 3, torch.cuda.device_count()
dist.init_process_group("nccl")
assert dist.get_world_size() == 6 and dist.get_rank() == 0
model = nn.parallel.DistributedDataParallel(nn.Linear(args.width, args.width).cuda(args.local_rank),
                                            device_ids=[args.local_rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(2, args.width).cuda()).sum().backward()
    opt.step()

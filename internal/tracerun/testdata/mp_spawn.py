"""DDP started the older way: torch.multiprocessing.spawn, one process per
GPU that torch.cuda.device_count() counts (--world-size for the trace);
rank 0's function is traced, in a world of that many."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


def main(rank, world):
    dist.init_process_group("nccl", rank=rank, world_size=world)
    assert dist.get_world_size() == world and dist.get_rank() == 0, (dist.get_world_size(), dist.get_rank())
    model = nn.parallel.DistributedDataParallel(nn.Linear(256, 256).to(rank), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        model(torch.randn(8, 256, device=rank)).sum().backward()
        opt.step()


if __name__ == "__main__":
    world = torch.cuda.device_count()
    mp.spawn(main, args=(world,), nprocs=world)

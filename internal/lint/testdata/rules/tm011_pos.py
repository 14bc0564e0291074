# A DDP script: each rank loads the checkpoint; without map_location every
# rank restores it onto cuda:0 first (the DDP tutorial loads with
# map_location={"cuda:0": f"cuda:{rank}"} for this reason).
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
state = torch.load("checkpoint.pt")  # want: TM011
model_state = torch.load(open("w.pt", "rb"), weights_only=True)  # want: TM011
scripted = torch.jit.load("model.pt")  # want: TM011
état = {"clé": torch.load("é.pt")}  # want: TM011


def load_every_rank_after_rank0_log(rank, path):
    if rank == 0:
        print("loading", path)
    return torch.load(path)  # want: TM011

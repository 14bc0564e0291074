# Multi-process job where only rank 0 reads the checkpoint (FSDP full state
# dicts): one process restores it, nothing is multiplied across ranks.
import torch
import torch.distributed as dist


def load_model_checkpoint(model, rank, path):
    if rank != 0:
        return
    model.load_state_dict(torch.load(path))


def load_optimizer_checkpoint(path):
    full_osd = None
    if dist.get_rank() == 0:
        full_osd = torch.load(path)
    return full_osd


def load_on_main(accelerator, path):
    if not accelerator.is_main_process:
        return None
    return torch.load(path)


def load_else(rank, path):
    if rank > 0:
        pass
    else:
        return torch.load(path)

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/NVIDIA/apex/issues/222
# pattern: processes on GPUs 1-3 each use ~1 GB on GPU0: map_location missing on torch.load after set_device
# expect: TM011
import torch
import torch.distributed as dist

def setup(args, model):
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    state = torch.load(args.pretrained)
    model.load_state_dict(state)
    return model.cuda()

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/NVIDIA/apex/issues/458
# pattern: without map_location every process deserializes onto the saving device, creating spurious CUDA contexts on device 0
# expect: TM011
import torch
import torch.distributed as dist

def main(args, model, optimizer):
    dist.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(args.local_rank)
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])

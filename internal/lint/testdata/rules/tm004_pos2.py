import torch


def reset(optimizer):
    optimizer.zero_grad(set_to_none=False)  # want: TM004

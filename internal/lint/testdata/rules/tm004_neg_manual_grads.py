# Gradients summed by hand into .grad (an outer optimizer over averaged
# worker deltas, as in local-SGD / DiLoCo-style loops): p.grad += g needs
# the .grad tensors to exist, so set_to_none=False is required.
import torch


def outer_step(model, outer_opt, deltas):
    outer_opt.zero_grad(set_to_none=False)
    for p, d in zip(model.parameters(), deltas):
        p.grad += d
    outer_opt.step()


def merge(model, shards, optimizer):
    optimizer.zero_grad(set_to_none=False)
    for shard in shards:
        for p, g in zip(model.parameters(), shard):
            p.grad.add_(g)
    optimizer.step()

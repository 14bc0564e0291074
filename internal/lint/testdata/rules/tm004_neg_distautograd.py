# Distributed autograd (torch.distributed.rpc): gradients live in the
# context, released every iteration, so there is nothing to zero. Loop shape
# from the RPC/parameter-server tutorials (and SeekPoint/pytorch
# ykadd-dist/demo14-1.py, detrain ppl/train.py):
# "not necessary to zero grads since they are accumulated into the
# distributed autograd context which is reset every iteration".
import torch
import torch.distributed.autograd as dist_autograd
from torch.distributed.optim import DistributedOptimizer
import torch.optim as optim


def run_trainer(model, criterion, get_next_batch, hidden):
    opt = DistributedOptimizer(optim.SGD, model.parameter_rrefs(), lr=0.05)
    for epoch in range(10):
        for data, target in get_next_batch():
            with dist_autograd.context() as context_id:
                output, hidden = model(data, hidden)
                loss = criterion(output, target)
                dist_autograd.backward(context_id, [loss])
                opt.step(context_id)


def train_loop(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        with dist_autograd.context() as context_id:
            pred = model(X)
            loss = loss_fn(pred, y)
            dist_autograd.backward(context_id, [loss])
            optimizer.step(context_id)

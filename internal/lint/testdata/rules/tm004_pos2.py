import torch


def reset(optimizer):
    optimizer.zero_grad(set_to_none=False)  # want: TM004


def train_grads_kept(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)  # want: TM004
        criterion(model(x), y).backward()
        optimizer.step()

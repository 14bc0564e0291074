import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


def finetune(model, loader, optimizer):
    # A second loop in a file that resets elsewhere: it never does.
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()  # want: TM004

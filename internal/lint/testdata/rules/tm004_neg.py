import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        for p in model.parameters():
            p.grad = None


def train2(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

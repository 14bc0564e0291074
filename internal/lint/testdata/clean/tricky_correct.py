# Correct code written in less common ways: context managers held in
# variables, conditional no_grad, helper-computed losses, multi-task sums.
import contextlib

import torch
import torch.nn.functional as F


def run_epoch(model, loader, optimizer, train):
    ctx = contextlib.nullcontext() if train else torch.no_grad()
    model.train(train)
    total = 0.0
    with ctx:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item()
    return total


def validate(model, val_loader, amp=True):
    model.eval()
    with (torch.inference_mode() if amp else torch.no_grad()):
        for x, _ in val_loader:
            model(x)


def multitask(model, loader, optimizer, heads):
    for x, targets in loader:
        out = model(x)
        loss = sum(F.mse_loss(out[h], targets[h]) for h in heads)
        total = 0
        for h in heads:
            total = total + F.l1_loss(out[h], targets[h])
        optimizer.zero_grad()
        (loss + total).backward()
        optimizer.step()


class EMA:
    def __init__(self, model, decay=0.999):
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            self.shadow[k].mul_(self.decay).add_(v.detach(), alpha=1 - self.decay)


def evaluate(model, val_loader, use_inference):
    model.eval()
    ctx = torch.inference_mode() if use_inference else torch.no_grad()
    preds = []
    with ctx:
        for x, _ in val_loader:
            preds.append(model(x).argmax(1).cpu())
    return preds

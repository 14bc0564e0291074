# A pytest file: forwards over a tiny validation set are the test itself.
import torch
import torch.nn as nn


def run_validation(model, val_loader):
    model.eval()
    return [model(x).argmax(1) for x in val_loader]


def evaluate(model, val_loader):
    out = []
    for x in val_loader:
        out.append(model(x).argmax(1))
    return out


net = nn.Linear(4, 2)
evaluate(net, [torch.randn(2, 4)])

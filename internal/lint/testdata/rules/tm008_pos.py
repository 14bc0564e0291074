import torch


def step(w, x):
    y = w * x + 1
    w.data = y  # want: TM008
    return w


def self_update(p, lr):
    p.data = p - lr * p.grad  # want: TM008


def scaled_cast(model, scale):
    for param in model.parameters():
        param.data = param.to(torch.float32) * scale  # want: TM008

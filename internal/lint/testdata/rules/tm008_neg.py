import torch


def sgd(params, lr):
    for p in params:
        p.data = p.data - lr * p.grad.data


def ema(ema_params, params, decay):
    for e, p in zip(ema_params, params):
        e.data = decay * e.data + (1 - decay) * p.data


def move(param, device):
    param.data = param.data.to(device)


@torch.no_grad()
def no_grad_update(w, x):
    y = w * x
    w.data = y


class Records(torch.utils.data.Dataset):
    def __init__(self, path):
        self.path = path
        self.data = self.load()

    def load(self):
        return [self.path]

    def refresh(self, other):
        other.data = other.load() + self.data


def upcast_trainable(model):
    for param in model.parameters():
        if param.requires_grad:
            param.data = param.to(torch.float32)
            param.data = param.float().contiguous()

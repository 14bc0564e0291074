import torch
import torch.nn.functional as F


def reset(opt):
    opt.zero_grad(set_to_none=True)


def train(model, loader, opt):
    # The reset is in a helper called from the loop.
    for x, y in loader:
        reset(opt)
        F.cross_entropy(model(x), y).backward()
        opt.step()


def step(model, x, y, opt):
    F.cross_entropy(model(x), y).backward()
    opt.step()


def fit(model, loader, opt):
    for x, y in loader:
        step(model, x, y, opt)
        opt.zero_grad()


def inner(model, loader, opt):
    # Loop in a function called by one that resets between its calls.
    for x, y in loader:
        F.cross_entropy(model(x), y).backward()
        opt.step()


def outer(model, loaders, opt):
    for loader in loaders:
        inner(model, loader, opt)
        opt.zero_grad()


class Trainer:
    def on_step_end(self):
        self.opt.zero_grad()

    def fit(self, loader):
        # The reset is a hook of the same class, called by convention.
        for x, y in loader:
            F.cross_entropy(self.model(x), y).backward()
            self.opt.step()
            self.callback("on_step_end")


def make_closure(opt):
    def closure():
        opt.zero_grad()
        return 0.0
    return closure


def lbfgs(model, loader, opt):
    for x, y in loader:
        F.cross_entropy(model(x), y).backward()
        opt.step(make_closure(opt))

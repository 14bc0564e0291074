# Drives testdata/fakecuda's torch the way a training loop drives a GPU,
# for `torchmem estimate --trace --real` on a host without one. Sizes in
# MiB: weights 1 at setup; each step's forward 4 of activations, backward
# a 1 temporary (and the 1 of gradients the first time) before it frees
# the activations, the optimizer's 2 of states the first time and a 1
# temporary. The peak is step 2's backward: 1+4+1+2+1 = 9 MiB.
# argv[1] "fail" raises in step 2's forward.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fakecuda"))

import torch  # noqa: E402
from torch.cuda import memory  # noqa: E402
from torch.nn.modules.module import Module  # noqa: E402
from torch.optim.optimizer import Optimizer  # noqa: E402

MiB = 1 << 20
fail = sys.argv[1:] == ["fail"]


class Model(Module):
    def __init__(self):
        self.weight = memory.alloc(1 * MiB)
        self.grad = None
        self.act = None

    def forward(self, step):
        if fail and step == 2:
            raise RuntimeError("the program failed in step 2")
        self.act = memory.alloc(4 * MiB)


class Opt(Optimizer):
    def __init__(self):
        self.state = None

    def _step(self):
        if self.state is None:
            self.state = memory.alloc(2 * MiB)
        tmp = memory.alloc(1 * MiB)
        memory.free(tmp)


def backward_pass(model):
    tmp = memory.alloc(1 * MiB)
    if model.grad is None:
        model.grad = memory.alloc(1 * MiB)
    memory.free(tmp)
    memory.free(model.act)


model, opt = Model(), Opt()
for step in range(1, 10):
    model(step)
    torch.autograd.backward(lambda: backward_pass(model))
    opt.step()
    print("step", step)

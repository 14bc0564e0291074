"""What YOLOv5's train.py (v7.0) asks of the tracer before its first step,
in torchmem's own minimal form (not YOLOv5's code): the model measures its
stride with a forward of zeros on the host before it is moved to the GPU
(BatchNorm and an in-place SiLU in it), a self-check compares float32 and
autocast outputs with torch.allclose (here float64) and would turn mixed precision off
when they differ, torch.equal checks a copy, and a step whose loss is not
finite is skipped. A GPU run passes every check; so must a traced one.
Each batch is normalized on the host before it is moved, with the mean
made on the batch's device as torchvision's Normalize makes it
(torch.as_tensor(mean, device=img.device)): host memory, in both modes.

usage: hostfirst.py BATCH
"""
import copy
import sys

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.SiLU(inplace=True),
            nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.SiLU(inplace=True))
        self.head = nn.Conv2d(32, 10, 1)
        # on the host, before any .cuda(): the weights are still host tensors
        self.stride = 64 // self.body(torch.zeros(1, 3, 64, 64)).shape[-1]

    def forward(self, x):
        return self.head(self.body(x))


def precision_agrees(model):
    # YOLOv5 runs this one under autocast; CUDA autocast is emulated on
    # meta only, so here a float64 copy stands for it and both modes
    # allocate the same
    x = torch.randn(1, 3, 32, 32, device="cuda")
    with torch.no_grad():
        a = model(x)
        b = copy.deepcopy(model).double()(x.double())
    return a.shape == b.shape and torch.allclose(a, b.float(), atol=0.1)


def main():
    batch = int(sys.argv[1])
    model = Net()
    assert model.stride == 4, model.stride
    model = model.cuda()
    assert precision_agrees(model), "the precision self-check failed"
    assert torch.equal(model.head.weight, model.head.weight.clone()), "a copy differs"
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    skipped = 0
    for _ in range(6):
        img = torch.rand(batch, 3, 64, 64)
        mean = torch.as_tensor([0.485, 0.456, 0.406], device=img.device).view(-1, 1, 1)
        x = img.sub_(mean).cuda()
        loss = model(x).square().mean()
        if not torch.isfinite(loss):
            skipped += 1
            continue
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    assert skipped == 0, "%d steps skipped as not finite" % skipped


main()

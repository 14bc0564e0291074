"""CUDA's legacy tensor types and default device, as older training code
uses them (PyTorch-GAN's `Tensor = torch.cuda.FloatTensor`; written for
torchmem's tests, no code copied): each makes a device tensor, which a
CPU-only torch refuses, so the trace had stopped before its first step.

usage: legacy_types.py [default-type|default-device]
"""
import sys

import numpy as np
import torch

mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode == "default-type":
    torch.set_default_tensor_type("torch.cuda.FloatTensor")
elif mode == "default-device":
    torch.set_default_device("cuda")
Tensor = torch.cuda.FloatTensor
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1))
if not mode:
    model = model.cuda()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    x = torch.randn(32, 64).type(Tensor)  # a host batch moved by .type()
    assert isinstance(x, torch.cuda.FloatTensor) and x.type() == "torch.cuda.FloatTensor", x.type()
    valid = Tensor(np.ones((32, 1)))  # labels made from numpy
    noise = Tensor(32, 64).normal_()  # an uninitialised tensor of these sizes
    loss = (model(x + noise) - valid).pow(2).mean()  # (mse_loss differs on torch 2 CPU)
    loss.backward()
    opt.step()
    opt.zero_grad()

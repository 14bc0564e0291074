"""Tensor parallelism with PyTorch's own API (DTensor): a device mesh of
the world made by init_device_mesh (which makes the process group itself),
a Megatron-style MLP split column- then row-wise by parallelize_module."""
import os

import torch
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

world = int(os.environ["WORLD_SIZE"])
mesh = init_device_mesh("cuda", (world,))
model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()
model = parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    model(torch.randn(16, 512, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()

"""Tensor parallelism with PyTorch's own API (DTensor): a device mesh of
the world made by init_device_mesh (which makes the process group itself),
a Megatron-style MLP split column- then row-wise by parallelize_module.

usage: tensor_parallel.py [gather]
  gather: both layers split column-wise, each output gathered
    (ColwiseParallel(output_layouts=Replicate()): a functional all-gather
    and its wait, as a tensor-parallel model's logits are gathered)
  attention: attention's heads split over the ranks (q, k, v projections
    column-wise as DTensors, use_local_output=False, as pytorch/examples'
    Llama does), causal scaled_dot_product_attention on them, the output
    projection row-wise
"""
import os
import sys

import torch
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module



class Attention(nn.Module):
    def __init__(self, dim=512, heads=8):
        super().__init__()
        self.heads = heads
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = (w(x).view(b, s, self.heads, d // self.heads).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        o = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(o.transpose(1, 2).reshape(b, s, d))


world = int(os.environ["WORLD_SIZE"])
mode = sys.argv[1] if len(sys.argv) > 1 else ""
mesh = init_device_mesh("cuda", (world,))
model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).cuda()
x = torch.randn(16, 512, device="cuda")
plan = {"0": ColwiseParallel(), "2": RowwiseParallel()}
if mode == "gather":
    plan = {"0": ColwiseParallel(output_layouts=Replicate()), "2": ColwiseParallel(output_layouts=Replicate())}
if mode == "attention":
    model, x = Attention().cuda(), torch.randn(4, 64, 512, device="cuda")
    local = ColwiseParallel(use_local_output=False)
    plan = {"wq": local, "wk": local, "wv": local, "wo": RowwiseParallel()}
model = parallelize_module(model, mesh, plan)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()

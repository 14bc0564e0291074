"""AdamW(fused=True) on the GPU, as nanoGPT asks for it on CUDA (written
for torchmem's tests, no code copied). torch >= 2.0 refuses fused=True for
parameters on a device without fused kernels, which meta was; exits 3 on
a torch whose AdamW has no fused option.

usage: fusedadamw.py [BATCH]
"""

import inspect
import sys

import torch
import torch.nn as nn

if "fused" not in inspect.signature(torch.optim.AdamW).parameters:
    sys.exit(3)
batch = int(sys.argv[1]) if len(sys.argv) > 1 else 8
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64)).to("cuda")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
for step in range(3):
    loss = model(torch.randn(batch, 64, device="cuda")).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

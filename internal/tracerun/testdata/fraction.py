"""A job that caps PyTorch's allocator itself, as shared-GPU scripts do
(written for torchmem's tests, no code copied): a quarter of the GPU,
asked through torch.cuda.memory's path, after a refused call (a
PyTorch error the program catches). An MLP of 64 MiB of weights trained
with Adam on batches of 4096: about 0.5 GiB at the peak.

argv: [fraction] (default 0.25)
"""

import sys

import torch
import torch.nn as nn

fraction = float(sys.argv[1]) if len(sys.argv) > 1 else 0.25
try:
    torch.cuda.set_per_process_memory_fraction(2)  # an int, and out of range: PyTorch refuses it
except (TypeError, ValueError) as e:
    print("refused:", type(e).__name__)
torch.cuda.memory.set_per_process_memory_fraction(fraction)
model = nn.Sequential(nn.Linear(2048, 4096), nn.ReLU(), nn.Linear(4096, 2048)).cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x = torch.randn(4096, 2048, device="cuda")
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

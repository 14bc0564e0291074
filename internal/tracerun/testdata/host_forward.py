"""A forward of the model on the host before it goes to the GPU (a FLOPs
count, a sanity check, TensorBoard's add_graph), then training on the
GPU (usage: host_forward.py [skip]: skip leaves the host forward out).
The GPU's forward phase, and its first cuBLAS workspace, begin with the
first forward on the GPU: the two runs reserve the same."""
import sys

import torch

model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 512))
if sys.argv[1:] != ["skip"]:
    with torch.no_grad():
        model(torch.randn(8, 512))
model.cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    model(torch.randn(4096, 512, device="cuda")).square().mean().backward()
    opt.step()
    opt.zero_grad()

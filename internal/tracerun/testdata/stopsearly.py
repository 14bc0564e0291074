"""A training script that fails before its first optimizer step (its data
file is missing): estimate --trace must not call the job's fit known."""
import torch
import torch.nn as nn

m = nn.Linear(256, 256).cuda()
opt = torch.optim.AdamW(m.parameters())
x = torch.randn(32, 256, device="cuda")
m(x).sum().backward()
open("/nonexistent-torchmem-test/train.bin", "rb")
opt.step()

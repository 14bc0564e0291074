"""Gradient clipping as torchtitan does it every step (torchmem's own test
script): clip_grad_norm_(..., foreach=True), then AdamW; argv[1] "none"
leaves foreach at None (HF's Trainer, Lightning), "true" asks for it. On
a GPU both take the multi-tensor (_foreach_norm) path; on meta torch
refused foreach=True and took per-tensor norms at None. torch 1.13 has no
foreach argument: "true" is then left out."""
import sys

import torch
import torch.nn as nn

dev = "cuda" if torch.cuda.is_available() else "cpu"
m = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 8)).to(dev)
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
kw = {"foreach": True} if sys.argv[1:] == ["true"] and torch.__version__ >= "2" else {}
for step in range(3):
    loss = m(torch.randn(32, 128, device=dev)).square().mean()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, **kw)
    opt.step()

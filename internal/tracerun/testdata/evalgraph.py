"""Training with an evaluation pass each step, written for torchmem's tests
(no code copied): the evaluation runs the model on a large batch and keeps
the outputs for a metric. Without torch.no_grad() every output keeps its
graph, and with it every tensor autograd saved; the graph is dropped
unused when the outputs go. (The H200 capture's
eval_leak_no_grad_missing.pickle is this bug measured: 1.19 GB alive.)

argv: nograd | grad (default grad: the bug), then the evaluation batch
(default 4096)
"""

import contextlib
import sys

import torch
import torch.nn as nn

guard = torch.no_grad if len(sys.argv) > 1 and sys.argv[1] == "nograd" else contextlib.nullcontext
model = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 10)).cuda()
opt = torch.optim.AdamW(model.parameters())


def evaluate(batches):
    outs = []
    with guard():
        for x in batches:
            outs.append(model(x))
    return sum(o.float().mean() for o in outs)


rows = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
val = [torch.randn(rows, 512, device="cuda") for _ in range(4)]
for step in range(3):
    x = torch.randn(256, 512, device="cuda")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    metric = evaluate(val)

"""optimizer.step(closure): the model's forward and backward run inside the
optimizer's step, in the closure it calls (Lightning's automatic
optimization does this for every step; LBFGS calls it several times).
Their tensors are the model's activations and gradients, not the
optimizer's temporaries; the momentum buffers are its states.

usage: closure_step.py BATCH [lbfgs]
"""
import sys

import torch
import torch.nn.functional as F

batch = int(sys.argv[1])
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
if len(sys.argv) > 2 and sys.argv[2] == "lbfgs":
    opt = torch.optim.LBFGS(model.parameters(), lr=0.1, max_iter=2)
else:
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for _ in range(4):
    x = torch.randn(batch, 64, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")

    def closure():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    opt.step(closure)

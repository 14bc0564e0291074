# Two optimizer.step() calls per training iteration: two optimizers over
# one backward (mode "two"), or the same optimizer stepped twice on the
# same gradients (mode "twice", as an old torchvision reference script did
# with --amp: scaler.step(optimizer) then optimizer.step()). Either way one
# iteration is one step for --steps.
import sys

import torch

mode = sys.argv[1]
body = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU()).cuda()
head = torch.nn.Linear(1024, 10).cuda()
if mode == "two":
    opts = [torch.optim.Adam(body.parameters()), torch.optim.Adam(head.parameters())]
else:
    opt = torch.optim.Adam(list(body.parameters()) + list(head.parameters()))
    opts = [opt, opt]
for it in range(3):
    x = torch.randn(64, 256, device="cuda")
    loss = head(body(x)).logsumexp(1).mean()
    loss.backward()
    for o in opts:
        o.step()
    for o in opts:
        o.zero_grad(set_to_none=True)

"""torch.func.grad beside an ordinary training step, written for
torchmem's tests (no code copied): functorch refuses to run while
saved-tensor hooks are on the stack, and the tracer keeps its own there
(_trace_saved.py). torch >= 2.0.
"""

import torch

w = torch.randn(8, 8, device="cuda", requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(3):
    x = torch.randn(4, 8, device="cuda")
    g = torch.func.grad(lambda w_: (x @ w_).square().sum())(w)  # needs no saved-tensor hooks
    loss = (x @ w).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print("done")

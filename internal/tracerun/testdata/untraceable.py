# One optimizer step, then a data-dependent op (bincount's output size
# depends on the values) that a tensor without data cannot run.
import torch

model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8, device="cuda")
model(x).sum().backward()
opt.step()
if model(x).sum().item() > 1e9:  # a placeholder 0: the branch is not taken
    print("unreachable on meta")
kept = torch.bincount((model(x) > 0).long().flatten())
print(kept.shape)

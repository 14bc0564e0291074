# A loss over the valid tokens only, picked by a boolean mask (x[valid]):
# the index's size depends on the data. The labels are all valid, so the
# meta trace's assumption (every element of an unknown mask) is the truth
# the CPU run measures.
import torch

m = torch.nn.Linear(64, 1000).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(512, 64, device="cuda")
    labels = torch.arange(512, device="cuda") % 1000
    valid = labels >= 0
    loss = torch.nn.functional.cross_entropy(m(x)[valid], labels[valid])
    loss.backward()
    opt.step()
    opt.zero_grad()

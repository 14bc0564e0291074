# One torchrun rank: 5 optimizer steps, no process group needed.
import os

import torch

model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    opt.zero_grad()
    model(torch.ones(2, 4)).sum().backward()
    opt.step()
print("rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"])

# A tiny training loop: 30 optimizer steps on CPU, prints a checksum.
import sys
import time

import torch

torch.manual_seed(0)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
sleep = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
x = torch.randn(64, 16)
y = torch.randn(64, 4)
for i in range(steps):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    if sleep:
        time.sleep(sleep)
print("loss %.6f" % loss.item())

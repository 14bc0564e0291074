# A program that leaves a process behind holding its output (as a
# DataLoader's forkserver and resource tracker do on Python 3.14): the
# trace ends with the program, and what it left is stopped.
# Args: PIDFILE
import subprocess
import sys

import torch

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))
model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()

# A job that forks after importing torch (what a fork-started DataLoader
# worker or a hand-rolled multiprocessing pool does): the child must get a
# connection of its own, and the parent's must stay intact. On Python 3.6
# (no os.register_at_fork) the child takes over at its first hook call, the
# optimizer step here.
import os
import sys
import time

import torch

opt = torch.optim.optimizer.SGD()
opt.step()
time.sleep(0.2)  # the parent's hello goes out on its own connection first
pid = os.fork()
if pid == 0:
    opt.step()
    time.sleep(2.5)  # the child's agent waits up to 2 s to learn whether it is a worker
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
opt.step()
print("parent %d child %d" % (os.getpid(), pid))

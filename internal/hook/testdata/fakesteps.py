# Two optimizers stepping in each of 7 iterations (a GAN's G and D): the
# hook must count 7 steps, whichever step API this fake torch offers.
import torch

g, d = torch.optim.optimizer.SGD(), torch.optim.optimizer.SGD()
for _ in range(7):
    d.step()
    g.step()
print("ok")

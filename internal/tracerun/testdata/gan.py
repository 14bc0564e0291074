"""A GAN's loop (written for torchmem's tests, no code copied): the
discriminator steps after its backward, then the generator after its
own, each with its Adam. One iteration is both steps: --steps 2 must
trace both iterations to the generator's second step, where both Adams'
states are alive through a forward and backward, the job's peak.
"""
import torch
from torch import nn

G = nn.Sequential(nn.Linear(128, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 784)).cuda()
D = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1)).cuda()
opt_g = torch.optim.Adam(G.parameters())
opt_d = torch.optim.Adam(D.parameters())
bce = nn.BCEWithLogitsLoss()
for it in range(10):
    real = torch.randn(128, 784, device="cuda")
    fake = G(torch.randn(128, 128, device="cuda"))
    opt_d.zero_grad()
    loss_d = bce(D(real), torch.ones(128, 1, device="cuda")) + bce(D(fake.detach()), torch.zeros(128, 1, device="cuda"))
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = bce(D(fake), torch.ones(128, 1, device="cuda"))
    loss_g.backward()
    opt_g.step()

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/Hsintien-Ng/idinvert_pytorch-reproduced/issues/1
# pattern: optimizer_D.zero_grad() missing before the discriminator's backward
# expect: TM004
import torch

def training_loop(E, D, G, loader, optimizer_D):
    for real in loader:
        fake = G(E(real)).detach()
        loss_d = torch.nn.functional.softplus(D(fake)).mean() + torch.nn.functional.softplus(-D(real)).mean()
        loss_d.backward()
        optimizer_D.step()

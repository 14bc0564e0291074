# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/9
# pattern: Memory blow up when setting retain_graph = True on every backward of the training loop
# expect: TM012
import torch

def train_vae(encoder, decoder, loader, vae_optim):
    for batch in loader:
        z, kl = encoder(batch)
        recon = decoder(z)
        total_vae_loss = recon + kl
        vae_optim.zero_grad()
        total_vae_loss.backward(retain_graph=True)
        vae_optim.step()

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/snakers4/silero-vad/pull/699
# pattern: tuning/utils.py: optimizer.zero_grad() missing before loss.backward()
# expect: TM004
import torch

def train(config, loader, jit_model, decoder, criterion, optimizer, device):
    decoder.train()
    for i, (x, targets, masks) in enumerate(loader):
        x = x.to(device)
        stft_out = jit_model._model.stft(x)
        output = decoder(jit_model._model.encoder(stft_out)).squeeze(1)
        loss = criterion(output, targets.to(device))
        loss.backward()
        optimizer.step()

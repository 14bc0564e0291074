# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/sgadgil6/cnslab_fmri/issues/4
# pattern: LSTM state carried between batches: backward fails, and with retain_graph=True the buffers OOM
# expect: TM016
import torch
import torch.nn as nn

def train(model, loader, optimizer, criterion, device):
    hidden = (torch.randn(1, 64, 128).to(device), torch.randn(1, 64, 128).to(device))
    for x, y in loader:
        out, hidden = model.lstm(x.to(device), hidden)
        loss = criterion(model.linear(out[:, -1, :]), y.to(device))
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()

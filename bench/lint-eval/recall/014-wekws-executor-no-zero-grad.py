# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/wenet-e2e/wekws/pull/73
# pattern: executor.py calls optimizer.step() but never optimizer.zero_grad()
# expect: TM004
import torch

def train(model, optimizer, data_loader, device, criterion, clip):
    model.train()
    for batch_idx, (key, feats, target, feats_lengths) in enumerate(data_loader):
        feats = feats.to(device)
        target = target.to(device)
        logits = model(feats)
        loss = criterion(logits, target, feats_lengths)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()

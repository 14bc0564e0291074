# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232/2
# pattern: calls torch.cuda.empty_cache() after processing each batch; ~100 s slower per epoch, albanD: not healthy
# expect: TM005
import torch

def train(model, loader, optimizer, criterion):
    for inputs, targets in loader:
        optimizer.zero_grad()
        loss = criterion(model(inputs.cuda()), targets.cuda())
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()

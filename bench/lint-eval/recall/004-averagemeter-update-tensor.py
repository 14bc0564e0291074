# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/rabbityl/lepard/issues/12
# pattern: DataLoader workers killed after a while; cause: AverageMeter.update() fed the loss tensor, fixed by detaching
# expect: TM002
import torch

class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

def train(model, loader, optimizer):
    meter = AverageMeter()
    for inputs in loader:
        loss = model(inputs).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        meter.update(loss)
    return meter.sum / meter.count

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/hosseinshn/GradNorm/issues/9
# pattern: loss.backward(retain_graph=True) every iteration: CUDA out of memory as iterations grow
# expect: TM012
import torch

def train(model, loader, optimizer, weights):
    for it, (x, ys) in enumerate(loader):
        task_losses = torch.stack(model(x, ys))
        loss = torch.sum(weights * task_losses)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()

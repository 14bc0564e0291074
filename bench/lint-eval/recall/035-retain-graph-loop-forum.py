# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://discuss.pytorch.org/t/how-computation-graph-in-pytorch-is-created-and-freed/3515/4
# pattern: with retain_graph=True in the loop, are the graphs of all 100 iterations kept in memory?
# expect: TM012
import torch

for i in range(100):
    a = torch.autograd.Variable(torch.randn(2, 3).cuda(), requires_grad=True)
    y = torch.sum(a)
    y.backward(retain_graph=True)

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/51349
# pattern: autograd.grad with set_detect_anomaly(True): ~2 MiB more GPU memory every iteration
# expect: TM014
import torch

torch.autograd.set_detect_anomaly(True)
for rep in range(1000):
    batch = torch.ones(10, 30000).cuda().requires_grad_()
    y = batch.norm()
    grad = torch.autograd.grad(outputs=y, inputs=batch, create_graph=True, retain_graph=True)[0]

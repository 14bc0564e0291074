# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/yenchenlin/nerf-pytorch/issues/42
# pattern: torch.autograd.set_detect_anomaly(True) at the top of run_nerf_helpers.py slows training by ~50%
# expect: TM014
import torch
torch.autograd.set_detect_anomaly(True)
import torch.nn as nn
import torch.nn.functional as F

img2mse = lambda x, y: torch.mean((x - y) ** 2)

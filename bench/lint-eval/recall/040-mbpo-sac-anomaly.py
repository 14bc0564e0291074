# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/Xingyu-Lin/mbpo_pytorch/issues/8
# pattern: sac.py line 11 enables anomaly detection: thousands of times slower
# expect: TM014
import os
import torch
import torch.nn.functional as F
from torch.optim import Adam

torch.autograd.set_detect_anomaly(True)

class SAC(object):
    def __init__(self, num_inputs, action_space, args):
        self.gamma = args.gamma

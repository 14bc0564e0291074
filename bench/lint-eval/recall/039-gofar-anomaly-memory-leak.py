# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/JasonMa2016/GoFAR/pull/2
# pattern: Removed debug flag torch.autograd.set_detect_anomaly(True) that leaked memory until training crashed
# expect: TM014
import torch

torch.autograd.set_detect_anomaly(True)

class GoFARAgent:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic

# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/k2-fsa/icefall/pull/1821
# pattern: FutureWarning: torch.cuda.amp.autocast(args...) is deprecated (ljspeech recipe)
# expect: TM009
import torch
from torch.cuda.amp import autocast

def compute_loss(model, batch, use_fp16):
    with autocast(enabled=use_fp16):
        loss = model(batch)
    return loss

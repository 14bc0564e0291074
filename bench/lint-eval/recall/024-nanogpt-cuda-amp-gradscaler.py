# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/karpathy/nanoGPT/issues/635
# pattern: FutureWarning: torch.cuda.amp.GradScaler(args...) is deprecated (train.py:196)
# expect: TM009
import torch

dtype = "float16"
scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))

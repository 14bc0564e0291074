# The new API is tried first; the deprecated one is only the fallback for
# older releases (a common compatibility shim; torch.amp.GradScaler("cuda")
# exists from PyTorch 2.3).
import torch

try:
    scaler = torch.amp.GradScaler("cuda")
except (AttributeError, TypeError):
    scaler = torch.cuda.amp.GradScaler()

if hasattr(torch, "amp") and hasattr(torch.amp, "autocast"):
    ctx = torch.amp.autocast("cuda", dtype=torch.float16)
else:
    ctx = torch.cuda.amp.autocast(dtype=torch.float16)

autocast = torch.amp.autocast if hasattr(torch, "amp") else torch.cuda.amp.autocast

import torch
from torch.amp import GradScaler, autocast

scaler = GradScaler("cuda")


def step(model, x):
    with autocast("cuda", dtype=torch.bfloat16):
        return model(x)


def step2(model, x):
    with torch.autocast(device_type="cuda"):
        return model(x)

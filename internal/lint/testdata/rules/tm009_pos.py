import torch
from torch.cuda.amp import GradScaler, autocast
from torch.cuda import amp

scaler = GradScaler()  # want: TM009
scaler2 = torch.cuda.amp.GradScaler()  # want: TM009


def step(model, x):
    with autocast():  # want: TM009
        return model(x)


def step2(model, x):
    with amp.autocast(dtype=torch.float16):  # want: TM009
        return model(x)

"""accelerate's FSDP2 (accelerate launch --use_fsdp --fsdp_version 2): its
prepare() shards the model with fully_shard and switches the optimizer to
the shards, matching them by data_ptr(). The model is fsdp2_train.py's."""
import torch
import torch.nn as nn
from accelerate import Accelerator

acc = Accelerator()
model = nn.Sequential(*[nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)) for _ in range(3)])
model.append(nn.Linear(256, 10))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
model, opt = acc.prepare(model, opt)
for _ in range(3):
    x = torch.randn(16, 256, device=acc.device)
    y = torch.randint(0, 10, (16,), device=acc.device)
    acc.backward(nn.functional.cross_entropy(model(x), y))
    opt.step()
    opt.zero_grad()

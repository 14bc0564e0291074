"""An accelerate training loop, run by `accelerate launch --use_deepspeed`:
the model of ds_train.py (1,051,136 parameters), torch's AdamW, which
accelerate hands to DeepSpeed."""
import torch
import torch.nn as nn
from accelerate import Accelerator

acc = Accelerator()
model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256), nn.GELU(),
                      nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 256)), batch_size=8)
model, opt, data = acc.prepare(model, opt, data)
for (x,) in data:
    loss = model(x.to(torch.bfloat16)).float().pow(2).mean()
    acc.backward(loss)
    opt.step()
    opt.zero_grad()

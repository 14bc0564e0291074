"""An optimizer made before the model goes to the GPU, its weights put
straight into the modules' _parameters as real host tensors (as accelerate's
set_module_tensor_to_device does with a safetensors checkpoint under
diffusers' from_pretrained; DreamBooth's train_dreambooth.py then makes its
AdamW before accelerator.prepare moves the UNet). On a GPU cpu -> cuda keeps
each Parameter object, so the optimizer steps the moved weights: its states
are made at the first step. Written for torchmem's tests, no code copied.

usage: optfirst.py [BATCH]
"""

import sys

import numpy as np
import torch
import torch.nn as nn

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 8

model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256), nn.LayerNorm(256), nn.Linear(256, 10))
# a loader's tensors: real host memory (numpy), not made by register_parameter
for mod in model.modules():
    for name, p in list(mod._parameters.items()):
        real = torch.from_numpy(np.zeros(tuple(p.shape), dtype=np.float32))
        mod._parameters[name] = nn.Parameter(real, requires_grad=p.requires_grad)
params = list(model.parameters())
opt = torch.optim.AdamW(params, lr=1e-3)
model.to("cuda")
for step in range(4):
    x = torch.randn(batch, 256, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    nn.functional.cross_entropy(model(x), y).backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
print("states", len(opt.state))

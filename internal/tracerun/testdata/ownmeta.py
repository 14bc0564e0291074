"""Tensors the program makes on meta itself hold no GPU memory: a model
built under torch.device("meta") for deferred initialisation (then
to_empty(device="cuda") and reset_parameters(), as torchtitan and FSDP's
param_init_fn do), one never made (a shape probe), and device="meta"
(or torch.device("meta")) written out; what is made under a device tensor's own device (its
.device, which is meta in meta mode too) is on the GPU.
usage: ownmeta.py (torch >= 2.0: device contexts)"""
import torch
import torch.nn as nn

with torch.device("meta"):
    probe = nn.Sequential(*[nn.Linear(1024, 1024) for _ in range(8)])  # 32 MiB, never made
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))
scratch = torch.empty(1 << 22, device="meta")  # 16 MiB, never made
scratch2 = torch.empty(1 << 22, device=torch.device("meta"))  # the same, as a device object
print(sum(p.numel() for p in probe.parameters()), scratch.shape, scratch2.shape)
w = model[0].weight
assert w.is_meta and not w.is_cuda, (w.is_meta, w.is_cuda)
model.to_empty(device="cuda")
for m in model:
    if isinstance(m, nn.Linear):
        m.reset_parameters()
assert model[0].weight.is_cuda
# a device context of a device tensor's device is the GPU (torchtitan's
# init_weights: with torch.device(self.freqs_cis.device): ...)
with torch.device(model[0].weight.device):
    model.register_buffer("table", torch.ones(1 << 16))
assert model.table.is_cuda
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(32, 256, device="cuda")
    loss = nn.functional.cross_entropy(model(x), torch.randint(0, 10, (32,), device="cuda"))
    loss.backward()
    opt.step()
    opt.zero_grad()

"""A safetensors checkpoint larger than the host can map: the process's
address space is capped 2 GiB above what it uses, and the checkpoint (a
sparse file: a valid header, no data on disk) holds 8 GiB of float32
weights, so safetensors' mmap is refused ("unable to mmap ... Cannot
allocate memory"), as a 48 GB Flux transformer's is on a 24 GB host. The
model is made, loaded (load_file, load_state_dict), moved to the GPU and
trained two AdamW steps. Written for torchmem's tests, no code copied.

usage: bigsafetensors.py DIR
"""

import json
import os
import resource
import sys

import torch
import torch.nn as nn
from safetensors.torch import load_file

layers, width = 32, 8192
path = os.path.join(sys.argv[1], "model.safetensors")
hdr, off = {}, 0
for i in range(layers):
    for name, shape in (("weight", [width, width]), ("bias", [width])):
        n = 4 * shape[0] * (shape[1] if len(shape) > 1 else 1)
        hdr["%d.%s" % (i, name)] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + n]}
        off += n
h = json.dumps(hdr).encode()
h += b" " * (-len(h) % 8)
with open(path, "wb") as f:
    f.write(len(h).to_bytes(8, "little"))
    f.write(h)
    f.truncate(8 + len(h) + off)

with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 30), resource.RLIM_INFINITY))

model = nn.Sequential(*[nn.Linear(width, width) for _ in range(layers)])
model.load_state_dict(load_file(path))
model.cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(3):
    model(torch.randn(4, width, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

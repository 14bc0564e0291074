"""Checkpoints loaded straight to the GPU (usage: loaded_ckpt.py DIR, DIR
holding sd.pt, a Linear(1024, 1024)'s state dict, and model.pt, the whole
module pickled): the state dict is kept in a variable after
load_state_dict, 4 MiB the GPU holds for nothing (torch.load's, the
load-to-host lever's); the pickled module's tensors are its parameters;
a host model given the GPU's state dict stays on the host."""
import os
import sys

import torch

d = sys.argv[1]
model = torch.nn.Linear(1024, 1024).cuda()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # (bubbliiiing's train.py)
sd = torch.load(os.path.join(d, "sd.pt"), map_location=device)
model.load_state_dict(sd)
host = torch.nn.Linear(1024, 1024)
host.load_state_dict(sd)  # a device-to-host copy: this model stays on the host
host(torch.randn(2048, 1024)).sum().backward()  # and so does its forward (nothing on the GPU)
kw = {"weights_only": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
whole = torch.load(os.path.join(d, "model.pt"), map_location="cuda", **kw)
opt = torch.optim.SGD(list(model.parameters()) + list(whole.parameters()), lr=0.1)
for _ in range(3):
    x = torch.randn(64, 1024, device="cuda")
    (model(x) + whole(x)).sum().backward()
    opt.step()
    opt.zero_grad()

# One optimizer step, then a configuration file that is not JSON: the
# error is raised inside Python's json module, and the line to change is
# this script's (yolov5's font download failing in urllib, offline, is
# the same shape).
import json

import torch

model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model(torch.randn(4, 8, device="cuda")).sum().backward()
opt.step()
config = json.loads("{not json")

# Created on the device, or data that has to come from the host.
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
noise = torch.randn(64, 100, 1, 1, device=device)
ids = torch.tensor([1, 2, 3]).to(device)
arr = torch.from_numpy(np.zeros(3)).cuda()
idx = torch.arange(10).to(torch.float16)
cpu = torch.zeros(3).to("cpu")
like = torch.zeros_like(noise)


def move(batch, dev):
    return torch.ones(4).to(dev)

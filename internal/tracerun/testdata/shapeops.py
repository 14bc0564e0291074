"""Training steps through the ops torch 1.13 has no meta kernel for, met
in public training scripts (segmentation and detection heads, style
transfer, video models; written for torchmem's tests, no code copied):
reflection and replication padding, adaptive average pooling to a grid,
3-D max pooling, grid_sample, a per-pixel cross entropy (nll_loss2d), a
smooth L1 loss, and multinomial sampling. The tracer does them by shape (_trace_api.py).

usage: shapeops.py [BATCH]
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 4
device = torch.device("cuda")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pad = nn.ReflectionPad2d(1)
        self.conv = nn.Conv2d(3, 8, 3)
        self.rpad = nn.ReplicationPad2d(1)
        self.head = nn.Conv2d(8, 5, 3)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.box = nn.Linear(8 * 16, 4)
        self.video = nn.Conv3d(3, 4, 3, padding=1)
        self.vpool = nn.MaxPool3d(2)

    def forward(self, x, clip):
        h = F.relu(self.conv(self.pad(x)))
        grid = torch.zeros(x.shape[0], 8, 8, 2, device=x.device)
        warped = F.grid_sample(h, grid, align_corners=False)
        seg = self.head(self.rpad(h))
        box = self.box(self.pool(h + F.interpolate(warped, size=h.shape[-2:])).flatten(1))
        v = self.vpool(self.video(clip))
        return seg, box, v


model = Net().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(batch, 3, 16, 16).to(device)
    clip = torch.randn(batch, 3, 4, 16, 16).to(device)
    mask = torch.randint(0, 5, (batch, 16, 16)).to(device)
    target = torch.randn(batch, 4).to(device)
    seg, box, v = model(x, clip)
    loss = F.cross_entropy(seg, mask) + F.smooth_l1_loss(box, target) + v.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():  # a sample, as a progress callback draws one
        torch.multinomial(F.softmax(box, dim=-1), 1)

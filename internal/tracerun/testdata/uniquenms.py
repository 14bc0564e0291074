# Data-dependent sizes a detection model's training step takes: torch.unique
# (batched_nms's per-level loop) and torchvision's nms. The ids are all
# distinct and the boxes disjoint, so the meta trace's assumptions (every
# element distinct, every box kept) are the truth the CPU run measures.
# And RoIAlign's forward and backward (Faster R-CNN's box head), which
# torchvision 0.14 has no meta kernel for.
import torch

try:
    from torchvision.ops import nms, roi_align
except ImportError:  # no torchvision: the unique half only
    nms = roi_align = None

model = torch.nn.Linear(4, 256).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    n = 512
    corner = torch.arange(n, device="cuda").float()[:, None] * 10
    boxes = torch.cat([corner, corner, corner + 5, corner + 5], dim=1)
    scores = torch.linspace(0, 1, n, device="cuda")
    ids = torch.unique(torch.arange(n, device="cuda"))
    keep = nms(boxes, scores, 0.5) if nms is not None else ids
    loss = model(boxes[keep]).pow(2).mean() * ids.numel()
    if roi_align is not None:
        feat = torch.randn(1, 8, 64, 64, device="cuda", requires_grad=True)
        loss = loss + roi_align(feat, [boxes[:16] / 100], output_size=7).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()

"""What one-stage detectors' training code (Ultralytics', bubbliiiing's
YOLOv8 and Faster R-CNN) does between the model and its loss, each of
which stopped or bent the meta trace:
- torch.Tensor([...]) anchors (torch 1.13: the legacy constructor under a
  dispatch mode);
- a 0-d device tensor as a number below the function mode: torch.full's
  fill (make_anchors' stride), a size (torch.zeros(b, counts.max(), 5));
- x.to(y.device) of a device tensor (cpu mode took it for the host);
- `if fg_mask.sum():` of a mask of unknown values (the box loss, and its
  head's gradients, skipped on a placeholder 0);
- health checks that must pass (isnan/isinf none, isfinite all), on a
  gradient too large to keep values of;
- an accuracy's .type(torch.FloatTensor), a copy to the host."""
import torch

torch.manual_seed(0)
anchors = torch.Tensor([10, 13, 16, 30, 33, 23]).view(-1, 2)
strides = torch.tensor([8.0, 16.0, 32.0]).cuda()
cls_head = torch.nn.Linear(256, 16).cuda()
box_head = torch.nn.Linear(256, 1100 * 4).cuda()  # a gradient of 1.1M elements
opt = torch.optim.Adam(list(cls_head.parameters()) + list(box_head.parameters()))
labels = torch.tensor([[0, 1, .5, .5, .2, .2], [0, 2, .4, .4, .1, .1], [1, 3, .3, .3, .1, .1]])
for step in range(2):
    x = torch.randn(64, 256).cuda()
    scores, boxes = cls_head(x), box_head(x)
    grid = torch.cat([torch.full((100 * (i + 1), 1), s, device="cuda") for i, s in enumerate(strides)])
    targets = labels.cuda().to(scores.device)
    _, counts = targets[:, 0].unique(return_counts=True)
    out = torch.zeros(2, counts.max(), 5, device=targets.device)
    fg_mask = scores.detach().abs() >= 0  # true on real data; unknown on meta
    loss = scores.sum() + grid.sum() * 0 + out.sum()
    if fg_mask.sum():
        loss = loss + boxes.pow(2).mean()
    loss.backward()
    if torch.isnan(loss).any() or not torch.isfinite(box_head.weight.grad).all() \
            or torch.isinf(box_head.weight.grad).sum() > 0 or (~torch.isfinite(loss)).any():
        raise SystemExit("non-finite: a health check failed")
    acc = torch.mean((scores.argmax(-1) == 3).type(torch.FloatTensor))
    opt.step()
    opt.zero_grad()

# A loss over the valid tokens only, picked by a boolean mask (x[valid]):
# the index's size depends on the data. The labels are all valid, so the
# meta trace's assumption (every element of an unknown mask) is the truth
# the CPU run measures. torch.where(mask), numpy's nonzero, is sized the
# same way, under inference_mode too, where it reaches the tracer whole
# (yolov5's validation matches its detections with it).
import torch

m = torch.nn.Linear(64, 1000).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(512, 64, device="cuda")
    labels = torch.arange(512, device="cuda") % 1000
    valid = labels >= 0
    loss = torch.nn.functional.cross_entropy(m(x)[valid], labels[valid])
    rows = torch.where(x[:, 0] == x[:, 0])[0]  # values unknown on meta; all true (no NaN)
    loss = loss + torch.nn.functional.cross_entropy(m(x)[rows], labels[rows])
    loss.backward()
    opt.step()
    opt.zero_grad()
    with torch.inference_mode():
        out = m(x)
        hits = torch.where(out == out)  # values unknown on meta; all true (no NaN)

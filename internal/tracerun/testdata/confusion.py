"""A segmentation loop that evaluates after each optimizer step with a
confusion matrix, as torchvision's segmentation reference and the
Chinese field guides' train_utils do: bincount(n * target + prediction,
minlength=n * n) of the pixels whose class is valid. On meta its values
are unknown; its size is minlength."""
import torch

n = 3
model = torch.nn.Conv2d(3, n, 3, padding=1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(2, 3, 32, 32, device="cuda")
y = torch.randint(0, n, (2, 32, 32), device="cuda")
mat = torch.zeros((n, n), dtype=torch.int64, device="cuda")
for epoch in range(3):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        pred = model(x).argmax(1).flatten()
        t = y.flatten()
        k = (t >= 0) & (t < n)
        inds = n * t[k].to(torch.int64) + pred[k]
        mat += torch.bincount(inds, minlength=n ** 2).reshape(n, n)

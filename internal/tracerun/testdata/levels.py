# torchvision's batched_nms in its loop form (boxes over 20,000 coordinates
# on a GPU): a feature-level id per proposal made with torch.full, the
# proposals picked by the top-k of a model's scores, then
# `for lvl in torch.unique(levels): torch.where(levels == lvl)`. The
# picked ids' values are not known on meta (the scores are data), but they
# are drawn from the 5 known ones: 5 passes of top_k / 5 rows each, not a
# pass per proposal.
import torch

L, N, K = 5, 2000, 1000
model = torch.nn.Linear(4, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    scores = model(torch.randn(L * N, 4, device="cuda")).squeeze(1)
    levels = torch.cat([torch.full((N,), i, dtype=torch.int64, device="cuda") for i in range(L)])
    top = scores.topk(K).indices
    lv, sc = levels[top], scores[top]
    kept = [sc[torch.where(lv == i)[0]] for i in torch.unique(lv)]
    loss = torch.cat(kept).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()

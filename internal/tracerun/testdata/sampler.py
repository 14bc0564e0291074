"""A detector's proposal sampling (torchvision's
BalancedPositiveNegativeSampler, then the box head's subsample): empty
uint8 masks, 1 put at 128 sampled positives and 384 negatives, the two
or-ed and torch.where taken. On meta each mask holds at most as many true
elements as indices were put: 512 rows, as the real masks have here
(2,000 positives and 2,000 negatives, more than the sampler takes). A
mask also written another way is all true again."""
import torch

model = torch.nn.Linear(4, 256).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    matched = torch.empty(6000, dtype=torch.int64, device="cuda")  # the matcher's labels
    positive = torch.arange(2000, device="cuda") * 3 + 2  # (torch.where(matched >= 1)[0] there)
    negative = torch.arange(2000, device="cuda") * 3 + 1
    num_pos = min(positive.numel(), 128)
    num_neg = min(negative.numel(), 512 - num_pos)
    perm1 = torch.randperm(positive.numel(), device=positive.device)[:num_pos]
    perm2 = torch.randperm(negative.numel(), device=negative.device)[:num_neg]
    pos_mask = torch.zeros_like(matched, dtype=torch.uint8)
    neg_mask = torch.zeros_like(matched, dtype=torch.uint8)
    pos_mask[positive[perm1]] = 1
    neg_mask[negative[perm2]] = 1
    sampled = torch.where(pos_mask | neg_mask)[0]
    # a mask filled another way too (through a view): not a sampler's any
    # more, all true as it is here (6,000 rows, not the 128 put)
    other = torch.zeros_like(matched, dtype=torch.bool)
    other[:] = True
    other[torch.arange(128, device="cuda")] = True
    sampled = torch.cat([sampled, torch.where(other)[0]])
    feats = torch.randn(6000, 4, device="cuda")[sampled]
    model(feats).square().mean().backward()
    opt.step()
    opt.zero_grad()

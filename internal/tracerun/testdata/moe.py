# A mixture-of-experts layer routed as transformers' Mixtral block does it
# (4.5x): softmax router, top-k, one_hot(...).permute(2, 1, 0) as the
# expert mask, a loop over the experts hit (nonzero), torch.where on each
# expert's mask row, the routed tokens gathered, index_add_ back. Trained
# two steps with AdamW. Args: tokens hidden experts top_k
import sys

import torch
import torch.nn.functional as F

T, H, E, K = (int(x) for x in sys.argv[1:5])


class Expert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Linear(H, 2 * H, bias=False)
        self.w2 = torch.nn.Linear(2 * H, H, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


class MoE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(H, E, bias=False)
        self.experts = torch.nn.ModuleList([Expert() for _ in range(E)])

    def forward(self, x):
        weights = F.softmax(self.gate(x), dim=1, dtype=torch.float)
        weights, selected = torch.topk(weights, K, dim=-1)
        out = torch.zeros_like(x)
        mask = F.one_hot(selected, num_classes=E).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for e in hit:
            idx, top_x = torch.where(mask[e].squeeze(0))
            y = self.experts[e](x[None, top_x].reshape(-1, H)) * weights[top_x, idx, None]
            out.index_add_(0, top_x, y.to(x.dtype))
        return out


model = MoE().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    loss = model(torch.randn(T, H, device="cuda")).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

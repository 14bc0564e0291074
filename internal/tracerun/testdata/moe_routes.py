# Mixture-of-experts blocks routed without one-hot masks, as public code
# does it: "minimind" compares the top-k indices with each expert and asks
# mask.any() before gathering (MiniMind's MOEFeedForward), "deepseek"
# repeats every token top_k times and indexes with flat_topk_idx == i in
# training, and in eval counts the tokens per expert with bincount(),
# copies the counts to the host (.cpu().numpy().cumsum(0)) and slices the
# sorted tokens by them (DeepSeek-MoE's moe_infer), "dropless" sorts the
# tokens by expert, splits them by bincount(minlength=E).tolist() and
# labels the rows with repeat_interleave(counts), "granite" counts them
# as a scatter of ones into zeros, summed (GraniteMoE's TopKGating:
# zeros.scatter(1, idx, 1).long().sum(0).tolist()) and splits the sorted
# tokens by the counts.
#
# The router is a softmax plus a bias that makes top-k pick experts
# (t*K + j) % E for token t: on real tensors every expert gets exactly
# tokens*K/E rows, the balanced share the meta trace assumes, so both
# traces must agree. Args: tokens hidden experts top_k style
import sys

import torch
import torch.nn.functional as F

T, H, E, K = (int(x) for x in sys.argv[1:5])
STYLE = sys.argv[5]


class Expert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = torch.nn.Linear(H, 2 * H, bias=False)
        self.w2 = torch.nn.Linear(2 * H, H, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)))


def route_bias():
    b = torch.zeros(T, E)
    for t in range(T):
        for j in range(K):
            b[t, (t * K + j) % E] = 100.0 - j
    return b


class MoE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = torch.nn.Linear(H, E, bias=False)
        self.experts = torch.nn.ModuleList([Expert() for _ in range(E)])
        self.register_buffer("bias", route_bias())

    def forward(self, x):
        scores = F.softmax(self.gate(x), dim=-1) + self.bias
        weight, idx = torch.topk(scores, K, dim=-1, sorted=False)
        weight = weight / weight.sum(dim=-1, keepdim=True)
        if STYLE == "minimind":
            return self.minimind(x, weight, idx)
        if STYLE == "deepseek" and self.training:
            return self.deepseek(x, weight, idx)
        if STYLE == "deepseek":
            return self.deepseek_infer(x, weight, idx)
        if STYLE == "granite":
            return self.granite(x, weight, idx)
        return self.dropless(x, weight, idx)

    def granite(self, x, weight, idx):
        sizes = torch.zeros(T, E, dtype=weight.dtype, device=x.device).scatter(1, idx, 1).long().sum(0).tolist()
        _, order = idx.flatten().sort(0)
        xs = x[order.div(K, rounding_mode="trunc")]
        outs = torch.cat([e(chunk) for e, chunk in zip(self.experts, xs.split(sizes))])
        outs = outs * weight.flatten()[order].unsqueeze(-1)
        return torch.zeros_like(x).index_add(0, order.div(K, rounding_mode="trunc"), outs)

    def minimind(self, x, weight, idx):
        y = torch.zeros_like(x)
        for i, expert in enumerate(self.experts):
            mask = idx == i
            if mask.any():
                token_idx = mask.any(dim=-1).nonzero().flatten()
                w = weight[mask].view(-1, 1)
                y.index_add_(0, token_idx, (expert(x[token_idx]) * w).to(y.dtype))
            elif self.training:
                y[0, 0] += 0 * sum(p.sum() for p in expert.parameters())
        return y

    def deepseek(self, x, weight, idx):
        flat = idx.view(-1)
        xs = x.repeat_interleave(K, dim=0)
        y = torch.empty_like(xs)
        for i, expert in enumerate(self.experts):
            y[flat == i] = expert(xs[flat == i])
        return (y.view(*weight.shape, -1) * weight.unsqueeze(-1)).sum(dim=1)

    @torch.no_grad()
    def deepseek_infer(self, x, weight, idx):
        flat, fw = idx.view(-1), weight.view(-1, 1)
        cache = torch.zeros_like(x)
        order = flat.argsort()
        ends = flat.bincount().cpu().numpy().cumsum(0)
        tok = order // K
        for i, end in enumerate(ends):
            start = 0 if i == 0 else ends[i - 1]
            if start == end:
                continue
            rows = tok[start:end]
            out = self.experts[i](x[rows]) * fw[order[start:end]]
            cache.scatter_reduce_(0, rows.view(-1, 1).repeat(1, x.shape[-1]), out, reduce="sum")
        return cache

    def dropless(self, x, weight, idx):
        flat = idx.view(-1)
        order = flat.argsort()
        counts = torch.bincount(flat, minlength=E)
        xs = x.repeat_interleave(K, dim=0)[order]
        outs = [e(chunk) for e, chunk in zip(self.experts, xs.split(counts.tolist()))]
        labels = torch.repeat_interleave(torch.arange(E, device=x.device), counts)
        ys = torch.cat(outs) * (labels >= 0).unsqueeze(-1)
        y = torch.empty_like(ys).index_copy(0, order, ys)
        return (y.view(*weight.shape, -1) * weight.unsqueeze(-1)).sum(dim=1)


model = MoE().cuda()
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    loss = model(torch.randn(T, H, device="cuda")).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if step == 0 and STYLE == "deepseek":
        model.eval()
        model(torch.randn(T, H, device="cuda"))
        model.train()

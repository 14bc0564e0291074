# A mixture of experts whose experts are one 3-D weight each, run as a
# grouped GEMM (torch._grouped_mm: transformers 5.x's default experts
# implementation on CUDA, torchtitan's): tokens sorted by expert, counted
# with histc, offsets by cumsum, then one grouped matmul per projection,
# with fp32 weights under bf16 autocast as the Trainer's bf16=True runs it
# (_grouped_mm is not an autocast op: its inputs stay fp32) with argv[2]
# amp, else in fp32. AdamW, steps given by argv[1] (default 2).
import sys

import torch
import torch.nn.functional as F

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
amp = len(sys.argv) > 2 and sys.argv[2] == "amp"
E, K, D, H, T = 8, 2, 64, 128, 256  # experts, top-k, width, expert width, tokens


class Experts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_up = torch.nn.Parameter(torch.randn(E, 2 * H, D) * 0.02)
        self.down = torch.nn.Parameter(torch.randn(E, D, H) * 0.02)

    def forward(self, x, idx, w):
        flat = idx.reshape(-1)
        ids, perm = torch.sort(flat)
        xs = x[perm // K]
        counts = torch.histc(ids.float() if x.device.type == "cpu" else ids.int(), bins=E, min=0, max=E - 1)
        offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
        gu = torch._grouped_mm(xs.to(self.gate_up.dtype), self.gate_up.transpose(-2, -1), offs=offs)
        g, u = gu.chunk(2, dim=-1)
        h = F.silu(g) * u
        out = torch._grouped_mm(h.to(self.down.dtype), self.down.transpose(-2, -1), offs=offs)
        out = out * w.reshape(-1)[perm].unsqueeze(-1)
        y = torch.zeros_like(x, dtype=out.dtype)
        return y.index_add_(0, perm // K, out)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(D)
        self.router = torch.nn.Linear(D, E, bias=False)
        self.experts = Experts()

    def forward(self, x):
        h = self.norm(x)
        w, idx = torch.topk(self.router(h).softmax(-1), K, dim=-1)
        return x + self.experts(h, idx, w).to(x.dtype)


model = torch.nn.Sequential(torch.nn.Linear(32, D), Block(), Block(), torch.nn.Linear(D, 10)).cuda()
opt = torch.optim.AdamW(model.parameters())
for _ in range(steps):
    x = torch.randn(T, 32).cuda()
    y = torch.randint(0, 10, (T,)).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = F.cross_entropy(model(x).float(), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

# A frozen encoder run under no_grad feeding a trainable head with a
# mixture-of-experts layer, trained with AdamW in float32 unless told; the
# script is written for a GPU and knows nothing of torchmem.
#
#   amp_regions.py plain      float32
#   amp_regions.py own        the AMP recipe's autocast regions, bf16: the
#                             encoder's forward, and the head's forward with
#                             the loss
#   amp_regions.py f32region  float32 under the recipe's regions asking for
#                             float32, which casts nothing (nanoGPT's
#                             --dtype=float32)
#   amp_regions.py closure    float32, the head's forward and backward in
#                             the closure optimizer.step calls (Lightning's
#                             automatic optimization)
#   amp_regions.py closure-own  that, with own's autocast regions
#   amp_regions.py indexadd   float32, its experts' outputs added into a
#                             float32 buffer with index_add_ and no cast:
#                             fine in float32, an error under autocast
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

mode = sys.argv[1]
WIDTH, EXPERTS, TOKENS = 1024, 4, 32768


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(EXPERTS))

    def forward(self, x):
        out = torch.zeros(x.shape, device=x.device)  # float32, as the buffers of many MoE blocks
        share = x.shape[0] // EXPERTS
        for i, e in enumerate(self.experts):
            idx = torch.arange(i * share, (i + 1) * share, device=x.device)
            y = e(x[idx])
            # Mixtral's block casts y to out's dtype first; without the
            # cast, index_add_ refuses a bf16 source for the float32 buffer
            out.index_add_(0, idx, y if mode == "indexadd" else y.to(out.dtype))
        return out


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(WIDTH, WIDTH)
        self.moe = Experts()
        self.norm = nn.LayerNorm(WIDTH)
        self.out = nn.Linear(WIDTH, 1000)

    def forward(self, x):
        h = F.gelu(self.inp(x))
        h = h + self.moe(h)
        return self.out(self.norm(h))


torch.manual_seed(0)
encoder = nn.Sequential(*[nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.GELU()) for _ in range(6)]).cuda().eval()
encoder.requires_grad_(False)
head = Head().cuda()
opt = torch.optim.AdamW(head.parameters(), lr=1e-4)
own = mode in ("own", "f32region", "closure-own")
amp = torch.float32 if mode == "f32region" else torch.bfloat16
for step in range(3):
    x = torch.randn(TOKENS, WIDTH).cuda()
    y = torch.randint(0, 1000, (TOKENS,)).cuda()
    with torch.no_grad(), torch.autocast("cuda", dtype=amp, enabled=own):
        feats = encoder(x)

    def closure():
        with torch.autocast("cuda", dtype=amp, enabled=own):
            loss = F.cross_entropy(head(feats), y)
        loss.backward()
        return loss

    if mode.startswith("closure"):
        opt.step(closure)
    else:
        closure()
        opt.step()
    opt.zero_grad(set_to_none=True)

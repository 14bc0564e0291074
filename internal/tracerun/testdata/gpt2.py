# GPT-2 in plain torch, module for module as Hugging Face's
# modeling_gpt2.py builds it (Conv1D = addmm with the weight stored
# (in, out); pre-LN blocks; gelu_new; eager attention with a (b, 1, s, s)
# float causal mask made once per forward; dropout 0.1 in embeddings,
# attention and residuals; lm_head tied to wte; the loss as
# ForCausalLMLoss computes it: labels shifted, logits.float(),
# cross_entropy). transformers is not needed.
#
# usage: gpt2.py LAYERS EMBD HEADS VOCAB BATCH SEQ [foreach|single|fused] [fp32|amp-bf16]
#                [eager|sdpa] [eager|compile] [plain|ckpt|keepgrads]
# amp-bf16: the forward and the loss under torch.autocast("cuda", bfloat16)
# (what Trainer's bf16=True does), the backward outside it.
# sdpa (torch >= 2.0): attention as modeling_gpt2.py's sdpa_attention_forward
# runs it without a padding mask: F.scaled_dot_product_attention(q, k, v,
# dropout_p=0.1 in training, is_causal=True), no mask tensor.
# compile: model = torch.compile(model), as nanoGPT's train.py does;
# compiled-fn: the loss through a function compiled at import.
# ckpt: each block under torch.utils.checkpoint.checkpoint(use_reentrant=False);
# keepgrads: opt.zero_grad(set_to_none=False), the gradients zeroed in place.
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        out = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return out.view(x.size()[:-1] + (self.weight.size(-1),))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.d = h, d
        self.c_attn = Conv1D(3 * d, d)
        self.c_proj = Conv1D(d, d)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)

    def forward(self, x, mask):
        B, T, D = x.shape
        q, k, v = self.c_attn(x).split(D, dim=2)
        shape = (B, T, self.h, D // self.h)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        if mask is None:  # sdpa
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1 if self.training else 0.0, is_causal=True)
            return self.resid_dropout(self.c_proj(out.transpose(1, 2).reshape(B, T, D)))
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        w = w + mask
        w = F.softmax(w, dim=-1)
        w = w.type(v.dtype)  # back to v's dtype under autocast; a no-op in fp32
        w = self.attn_dropout(w)
        out = torch.matmul(w, v).transpose(1, 2).reshape(B, T, D)
        return self.resid_dropout(self.c_proj(out))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = Conv1D(4 * d, d)
        self.c_proj = Conv1D(d, 4 * d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(gelu_new(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = Attention(d, h)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.mlp(self.ln_2(x))


class GPT2LMHeadModel(nn.Module):
    def __init__(self, layers, d, h, vocab, positions):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList([Block(d, h) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids, labels):
        B, T = ids.shape
        pos = torch.arange(T, device=ids.device).unsqueeze(0)
        mask = None
        if not sdpa:
            mask = torch.full((T, T), torch.finfo(torch.float32).min, device=ids.device).triu(1)
            mask = mask[None, None].expand(B, 1, T, T).contiguous()  # create_causal_mask's (b, 1, s, s)
        x = self.drop(self.wte(ids) + self.wpe(pos))
        for blk in self.h:
            x = checkpoint(blk, x, mask, use_reentrant=False) if ckpt else blk(x, mask)
        logits = self.lm_head(self.ln_f(x))
        labels = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


layers, d, h, vocab, batch, seq = (int(a) for a in sys.argv[1:7])
foreach = len(sys.argv) < 8 or sys.argv[7] == "foreach"
fused = {"fused": True} if len(sys.argv) > 7 and sys.argv[7] == "fused" else {}  # torch >= 2.0
amp = len(sys.argv) > 8 and sys.argv[8] == "amp-bf16"
sdpa = len(sys.argv) > 9 and sys.argv[9] == "sdpa"
ckpt = len(sys.argv) > 11 and sys.argv[11] == "ckpt"
keep_grads = len(sys.argv) > 11 and sys.argv[11] == "keepgrads"
torch.manual_seed(0)
model = GPT2LMHeadModel(layers, d, h, vocab, seq).cuda()
if len(sys.argv) > 10 and sys.argv[10] == "compile":
    model = torch.compile(model)
call_compiled = len(sys.argv) > 10 and sys.argv[10] == "compiled-fn"


def _scale(x):
    return x * 1.0


# a function compiled as libraries compile their helpers when imported:
# called only with compiled-fn
scale = torch.compile(_scale) if hasattr(torch, "compile") else _scale
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False if fused else foreach, **fused)
for step in range(3):
    ids = torch.randint(0, vocab, (batch, seq)).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = model(ids, ids)
    if call_compiled:
        loss = scale(loss)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=not keep_grads)

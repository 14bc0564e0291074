# A small transformer: multi-head attention written out, a custom autograd
# Function (its saved tensors live until its backward runs), Adam.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * (s * (1 + x * (1 - s)))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
        q = q.view(B, T, self.h, D // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, D // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, D // self.h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.h)
        mask = torch.tril(torch.ones(T, T, device=x.device, dtype=torch.bool))
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, D)
        x = x + self.proj(y)
        return x + self.down(Swish.apply(self.up(self.ln2(x))))


class Model(nn.Module):
    def __init__(self, vocab=100, d=64, h=4, n=2, T=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(T, d))
        self.blocks = nn.ModuleList([Block(d, h) for _ in range(n)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[: idx.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x))


torch.manual_seed(0)
device = torch.device("cuda")
model = Model().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    idx = torch.randint(0, 100, (4, 16), device=device)
    logits = model(idx)
    loss = F.cross_entropy(logits.view(-1, 100), idx.view(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

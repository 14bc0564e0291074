#!/usr/bin/env python3
"""A short CUDA training loop for bench/device-check.sh (a small GPT-like
model: token embedding, pre-norm transformer blocks, LM head; AdamW, bf16
autocast). Prints one line per epoch, the optimizer step count and the
median step time (CUDA-synchronised), so a bare run and a run under
`torchmem run` can be compared.

    python3 bench/device/cuda_train.py --seconds 20
    python3 bench/device/cuda_train.py --oom     # allocate past the GPU: a real CUDA OOM
"""
import argparse
import statistics
import sys
import time

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab, d, layers, heads, seq):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), 1), persistent=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.shape[1]]
        for b in self.blocks:
            x = b(x, self.mask[: idx.shape[1], : idx.shape[1]])
        return self.head(self.ln(x))


def oom():
    """Hold a few tensors, then ask for more than the whole GPU: the
    allocator's OOM observer fires while these are alive."""
    keep = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(4)]
    total = torch.cuda.get_device_properties(0).total_memory
    print("holding %d GiB, asking for %d GiB" % (len(keep), 2 * total >> 30), flush=True)
    torch.empty(2 * total, dtype=torch.uint8, device="cuda")  # raises torch.OutOfMemoryError


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--oom", action="store_true")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("cuda_train.py: no CUDA device")
    if a.oom:
        oom()
        return
    torch.manual_seed(0)
    vocab = 8192
    model = TinyGPT(vocab, 512, 6, 8, a.seq).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    times, steps, start = [], 0, time.perf_counter()
    while time.perf_counter() - start < a.seconds:
        x = torch.randint(0, vocab, (a.batch, a.seq + 1), device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x[:, :-1])
            loss = nn.functional.cross_entropy(logits.float().reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        steps += 1
        if steps % 200 == 0:
            print("step %d loss %.4f" % (steps, loss.item()), flush=True)
    warm = times[10:] or times
    print("done: %d optimizer steps on %s" % (steps, torch.cuda.get_device_name(0)))
    print("peak allocated %.1f MiB, reserved %.1f MiB" % (torch.cuda.max_memory_allocated() / 2**20,
                                                         torch.cuda.max_memory_reserved() / 2**20))
    print("median step time: %.3f ms" % (statistics.median(warm) * 1000))


if __name__ == "__main__":
    main()

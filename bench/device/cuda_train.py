#!/usr/bin/env python3
"""A short CUDA training loop for bench/device-check.sh (a small GPT-like
model: token embedding, pre-norm transformer blocks, LM head; AdamW, bf16
autocast). Prints one line per epoch, the optimizer step count and the
median step time (CUDA-synchronised), so a bare run and a run under
`torchmem run` can be compared.

    python3 bench/device/cuda_train.py --seconds 20
    python3 bench/device/cuda_train.py --oom     # allocate past the GPU: a real CUDA OOM
    python3 bench/device/cuda_train.py --workers 2 --spike-gib 80 --seconds 25
        # batches from 2 DataLoader worker processes; at step 50 a transient
        # 80 GiB tensor is freed into the cache (a --gpu-threshold crossing)
    python3 bench/device/cuda_train.py --hold-gib 2 --seconds 30
        # a second, unrelated process holding 2 GiB on the same GPU
"""
import argparse
import os
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


class Tokens(torch.utils.data.IterableDataset):
    """Random token batches made on the CPU, as a tokenising DataLoader
    would: each worker is a separate process of the job."""

    def __init__(self, vocab, batch, seq):
        super().__init__()
        self.vocab, self.batch, self.seq = vocab, batch, seq

    def __iter__(self):
        while True:
            yield torch.randint(0, self.vocab, (self.batch, self.seq + 1))


def batches(a, vocab):
    """Batches on the GPU: from DataLoader workers (--workers N) or made
    on the device directly."""
    if a.workers > 0:
        dl = torch.utils.data.DataLoader(Tokens(vocab, a.batch, a.seq), batch_size=None,
                                         num_workers=a.workers, pin_memory=a.device == "cuda")
        for x in dl:
            yield x.to(a.device, non_blocking=True)
    while True:
        yield torch.randint(0, vocab, (a.batch, a.seq + 1), device=a.device)


def hold(gib, seconds):
    """A second process on the same GPU: holds gib GiB and sleeps."""
    keep = torch.empty(int(gib * 2**30), dtype=torch.uint8, device="cuda")
    print("holding %.1f GiB on %s, pid %d" % (gib, torch.cuda.get_device_name(0), os.getpid()), flush=True)
    time.sleep(seconds)
    del keep


def reserved(device):
    return torch.cuda.memory_reserved() if device == "cuda" else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--oom", action="store_true")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--spike-gib", type=float, default=0, help="at step 50, a transient tensor of this size")
    p.add_argument("--hold-gib", type=float, default=0, help="only hold this much GPU memory for --seconds")
    p.add_argument("--device", default="cuda", help="cpu: a smoke test of this script on a host without a GPU")
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("cuda_train.py: no CUDA device")
    if a.oom:
        oom()
        return
    if a.hold_gib > 0:
        hold(a.hold_gib, a.seconds)
        return
    torch.manual_seed(0)
    vocab = 8192
    model = TinyGPT(vocab, 512, 6, 8, a.seq).to(a.device)
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    times, steps, start = [], 0, time.perf_counter()
    data = batches(a, vocab)
    while time.perf_counter() - start < a.seconds:
        x = next(data)
        if a.spike_gib > 0 and steps == 50:
            spike = torch.empty(int(a.spike_gib * 2**30), dtype=torch.uint8, device=a.device)
            del spike  # freed into the caching allocator: reserved stays high
            print("spike: %.1f GiB allocated and freed at step %d, reserved now %.1f GiB" % (
                a.spike_gib, steps, reserved(a.device) / 2**30), flush=True)
        sync()
        t0 = time.perf_counter()
        with torch.autocast(a.device, dtype=torch.bfloat16):
            logits = model(x[:, :-1])
            loss = nn.functional.cross_entropy(logits.float().reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sync()
        times.append(time.perf_counter() - t0)
        steps += 1
        if steps % 200 == 0:
            print("step %d loss %.4f" % (steps, loss.item()), flush=True)
    warm = times[10:] or times
    name = torch.cuda.get_device_name(0) if a.device == "cuda" else a.device
    print("done: %d optimizer steps on %s" % (steps, name))
    if a.device == "cuda":
        print("peak allocated %.1f MiB, reserved %.1f MiB" % (torch.cuda.max_memory_allocated() / 2**20,
                                                             torch.cuda.max_memory_reserved() / 2**20))
    print("median step time: %.3f ms" % (statistics.median(warm) * 1000))


if __name__ == "__main__":
    main()

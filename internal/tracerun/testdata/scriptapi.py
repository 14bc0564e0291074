"""A training loop that uses what public training scripts ask of the GPU
besides tensors (found sweeping pytorch/examples, timm, nanoGPT under the
tracer; written for torchmem's tests, no code copied): torch.accelerator
where torch has it, cudnn flags, CUDA seeds and RNG state, nn.DataParallel,
a DataLoader with a worker process and pinned memory, non_blocking copies,
torch.cuda.Event timing, a side stream, GradScaler, memory_stats() logging,
.to(x.device) of a host tensor, .item()/.cpu().numpy()/f-string reads
of device values, and a checkpoint saved and loaded back onto the GPU.

usage: scriptapi.py [BATCH] [CKPT]
"""

import os
import sys
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    ckpt = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tempfile.mkdtemp(), "ckpt.pt")

    acc = getattr(torch, "accelerator", None)
    if acc is not None and acc.is_available():
        device = acc.current_accelerator()
    elif torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        sys.exit("no GPU")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)

    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 10))
    model = nn.DataParallel(model).to(device=device)  # Module.to's keyword form
    assert next(model.parameters()).is_cuda, "the weights are on the GPU"
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()

    data = TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,)))
    loader = DataLoader(data, batch_size=batch, num_workers=1, pin_memory=True)
    side = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    for epoch in range(3):
        for i, (x, y) in enumerate(loader):
            start.record()
            with torch.cuda.stream(side):
                x = x.to(device, non_blocking=True)
            torch.cuda.current_stream().wait_stream(side)
            y = y.cuda(non_blocking=True)
            out = model(x)
            out = out + torch.ones(10).to(out.device)  # a host tensor to the model's device
            loss = nn.functional.cross_entropy(out, y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            end.record()
            torch.cuda.synchronize()
            acc1 = (out.argmax(1) == y).float().mean().cpu().numpy()
            mem = torch.cuda.memory_stats()["allocated_bytes.all.peak"]
            print(f"{epoch} {i} loss {loss:.3f} acc {float(acc1):.2f} "
                  f"{start.elapsed_time(end):.1f} ms {mem} B", out[0].tolist()[:2])
            if i == 0 and epoch == 0:
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                            "rng": torch.cuda.get_rng_state()}, ckpt)
                state = torch.load(ckpt, map_location=device)
                model.load_state_dict(state["model"])
                torch.cuda.set_rng_state(state["rng"])
                del state


# The guard: Python 3.14 starts DataLoader workers by forkserver, which
# imports this file again (as on a GPU host, where an unguarded script
# would run its training there too).
if __name__ == "__main__":
    main()

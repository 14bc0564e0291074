"""AutoBatch's way (Ultralytics' autobatch/profile_ops): forward passes at
growing batches, each ended by empty_cache(), an out-of-memory error
caught; then the training at a smaller batch. The peak is in the probe's
largest batch (640 MiB allocated); the training steps after it need
225 MiB."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1024)).cuda()


def profile(b):
    try:
        x = torch.randn(b, 1024, device="cuda")
        model(x)
        return torch.cuda.memory_reserved()
    except torch.cuda.OutOfMemoryError:
        return None
    finally:
        torch.cuda.empty_cache()


mem = [profile(b) for b in (1024, 4096, 16384)]
opt = torch.optim.AdamW(model.parameters())
for step in range(3):
    x = torch.randn(256, 1024, device="cuda")
    model(x).pow(2).mean().backward()
    opt.step()
    opt.zero_grad()

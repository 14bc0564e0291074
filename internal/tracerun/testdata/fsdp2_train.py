"""FSDP2 (fully_shard) under torchrun, traced as rank 0: each block and
the root sharded over the world, AdamW on the shards. The script checks
what sharding gives rank 0 (a quarter of each weight in a world of 4) on
meta as on real tensors.

usage (under torchrun): fsdp2_train.py [default|bf16|keep|deferred|host|offload|offload_deferred] [offload]
  bf16: MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)
  keep: reshard_after_forward=False (the unsharded blocks kept for backward)
  deferred: the model built on meta, sharded, then to_empty(device="cuda")
    and reset_parameters() (deferred initialisation, as torchtitan does)
  host: the model left on the host; fully_shard moves it to the GPU (the
    Hugging Face Trainer hands accelerate's FSDP2 a model so)
  offload: CPUOffloadPolicy(): the shards, their gradients and AdamW's
    states on the host, each shard copied to the GPU for its all-gather
  offload_deferred: offload with deferred initialisation, made with
    to_empty(device="cpu") as FSDP asks for CPU offload (torchtitan)
  a second argument "offload" adds CPU offload to any of them
"""
import sys

import torch
import torch.distributed as dist
import torch.nn as nn

try:
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
except ImportError:  # torch 2.4, 2.5
    from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard

mode = sys.argv[1] if len(sys.argv) > 1 else "default"
dist.init_process_group("nccl")
world = dist.get_world_size()
torch.cuda.set_device(0)

def build():
    m = nn.Sequential(*[nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)) for _ in range(3)])
    m.append(nn.Linear(256, 10))
    return m


deferred = mode in ("deferred", "offload_deferred")
if deferred:
    with torch.device("meta"):
        model = build()
elif mode == "host":
    model = build()
else:
    model = build().cuda()
kw = {}
if mode == "bf16":
    kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
if mode.startswith("offload") or sys.argv[2:] == ["offload"]:
    try:
        from torch.distributed.fsdp import CPUOffloadPolicy
    except ImportError:  # torch 2.4, 2.5
        from torch.distributed._composable.fsdp import CPUOffloadPolicy
    kw["offload_policy"] = CPUOffloadPolicy()
if mode == "keep":
    kw["reshard_after_forward"] = False
for block in model[:3]:
    fully_shard(block, **kw)
fully_shard(model, **kw)
if deferred:
    model.to_empty(device="cpu" if mode == "offload_deferred" else "cuda")
    for m in model.modules():
        if isinstance(m, nn.Linear):
            m.reset_parameters()
w = model[0][0].weight
assert w.to_local().shape == (1024 // world, 256), w.to_local().shape
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(16, 256, device="cuda")
    y = torch.randint(0, 10, (16,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
assert w.to_local().shape == (1024 // world, 256)
dist.destroy_process_group()

"""FSDP1 (FullyShardedDataParallel) under torchrun, traced as rank 0: each
block auto-wrapped into its own FSDP unit and the root one more, AdamW on
the flat parameters' shards. The script checks what sharding gives rank 0
(a quarter of each flat parameter in a world of 4) on meta as on real
tensors.

usage (under torchrun): fsdp1_train.py MODE, where MODE is
  default: the model left on the host, device_id=torch.cuda.current_device()
    (FSDP moves it: the pytorch/examples and Hugging Face way)
  orig: use_orig_params=True (accelerate's and the HF Trainer's default:
    the weights are views of the flat parameter, empty outside the shard)
  bf16: MixedPrecision(param_dtype=bfloat16, reduce_dtype=float32)
  grad_op: SHARD_GRAD_OP on a model moved with .cuda() before (no device_id)
  deferred: built on meta, param_init_fn=to_empty, sync_module_states=True
  ckpt: use_orig_params and activation checkpointing of each block
  hybrid: HYBRID_SHARD (one node of 4) with a size-based wrap policy
  no_shard: NO_SHARD (DDP's layout)
  offload: CPUOffload(offload_params=True): the shards, their gradients
    and AdamW's states on the host (traced on meta only); a second
    argument "offload" adds it to any other mode
"""
import functools
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import CPUOffload, MixedPrecision, ShardingStrategy
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy

mode = sys.argv[1] if len(sys.argv) > 1 else "default"
dist.init_process_group("nccl")
world = dist.get_world_size()
torch.cuda.set_device(0)


class Block(nn.Sequential):
    pass


def build():
    m = nn.Sequential(*[Block(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)) for _ in range(3)])
    m.append(nn.Linear(256, 10))
    return m


kw = dict(auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=torch.cuda.current_device())
if mode == "deferred":
    with torch.device("meta"):
        model = build()
    kw.update(param_init_fn=lambda m: m.to_empty(device=torch.device("cuda"), recurse=False), sync_module_states=True)
else:
    model = build()
if mode == "grad_op":
    model = model.cuda()
    del kw["device_id"]
    kw["sharding_strategy"] = ShardingStrategy.SHARD_GRAD_OP
if mode in ("orig", "ckpt"):
    kw["use_orig_params"] = True
if mode == "bf16":
    kw["mixed_precision"] = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
if mode == "hybrid":
    kw["sharding_strategy"] = ShardingStrategy.HYBRID_SHARD
    kw["auto_wrap_policy"] = functools.partial(size_based_auto_wrap_policy, min_num_params=100000)
if mode == "no_shard":
    kw["sharding_strategy"] = ShardingStrategy.NO_SHARD
if mode == "offload" or sys.argv[2:] == ["offload"]:
    kw["cpu_offload"] = CPUOffload(offload_params=True)
model = FSDP(model, **kw)
if mode == "ckpt":
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import apply_activation_checkpointing

    apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, Block))
share = 1 if mode == "no_shard" else world
# block 0's flat parameter, 525,568 elements: rank 0's quarter (with
# use_orig_params its weights' views, 131,392 of the first weight's; the
# size-based policy wraps each of its Linear layers: 263,168 in the first)
block = model._fsdp_wrapped_module[0]
got = [p.numel() for p in block.parameters() if p.numel() > 0][0]
want = (263168 if mode == "hybrid" else 525568) // share
assert got == want, (got, want)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(16, 256, device="cuda")
    y = torch.randint(0, 10, (16,), device="cuda")
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()

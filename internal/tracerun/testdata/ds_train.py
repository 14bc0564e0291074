"""A DeepSpeed training script, as DeepSpeed's tutorials write one:
deepspeed.initialize over a model of known size, engine.backward and
engine.step, run by the deepspeed launcher or torchrun.

usage: ds_train.py --stage S [--dtype bf16|fp16|fp32] [--bucket N]
                   [--offload] [--offload-param] [--zero-init]
                   [--optimizer AdamW|Lion|SGD] [--load-op BUILDER]
                   [--local_rank R]

The model: 256 -> 1024 -> 256 -> 1024 -> 256, four linear layers with
biases, 1,051,136 parameters. --bucket: ZeRO's reduce_bucket_size
(elements). --offload: offload_optimizer to the CPU; --offload-param:
offload_param too. --zero-init: the model built under deepspeed.zero.Init
(ZeRO-3 partitions it as it is made), its weights then set on rank 0 in
GatheredParameters(modifier_rank=0). --load-op: load that DeepSpeed op
first (QuantizerBuilder).
"""
import argparse
import os

import deepspeed
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--local_rank", type=int, default=-1)
p.add_argument("--stage", type=int, default=2)
p.add_argument("--dtype", default="bf16")
p.add_argument("--bucket", type=int, default=500_000)
p.add_argument("--offload", action="store_true")
p.add_argument("--offload-param", action="store_true")
p.add_argument("--zero-init", action="store_true")
p.add_argument("--optimizer", default="AdamW")
p.add_argument("--load-op", default="")
args = p.parse_args()
# the deepspeed launcher passes --local_rank; torchrun only the environment
assert args.local_rank in (-1, int(os.environ.get("LOCAL_RANK", "0"))), args.local_rank

deepspeed.init_distributed()
if args.load_op:
    import deepspeed.ops.op_builder as builders

    getattr(builders, args.load_op)().load()
zero = {"stage": args.stage, "reduce_bucket_size": args.bucket, "allgather_bucket_size": args.bucket,
        "stage3_prefetch_bucket_size": args.bucket, "stage3_param_persistence_threshold": 0}
if args.offload:
    zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
if args.offload_param:
    zero["offload_param"] = {"device": "cpu", "pin_memory": True}
cfg = {"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1,
       "optimizer": {"type": args.optimizer, "params": {"lr": 1e-4}}, "zero_optimization": zero}
if args.dtype != "fp32":
    cfg[args.dtype] = {"enabled": True}


def build():
    return nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256), nn.GELU(),
                         nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))


if args.zero_init:
    with deepspeed.zero.Init(config_dict_or_path=cfg):
        model = build()
    # rank 0 sets the weights and broadcasts them, as transformers
    # initialises and loads a model's weights under ZeRO-3
    with deepspeed.zero.GatheredParameters(list(model.parameters()), modifier_rank=0):
        for w in model.parameters():
            w.data.zero_()
else:
    model = build()
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
for step in range(3):
    x = torch.randn(8, 256, device=engine.device, dtype=dtype)
    loss = engine(x).float().pow(2).mean()
    engine.backward(loss)
    engine.step()

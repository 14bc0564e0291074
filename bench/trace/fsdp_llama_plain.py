"""Plain-torch Llama (internal/tracerun/testdata/llama.py) under FSDP, for
comparing a traced FSDP job with the built-in `--fsdp`: built on meta,
sharded per layer and at the root, made on the GPU, AdamW.

  FSDP 2: fully_shard per layer and the root, to_empty, reset_parameters
  FSDP 1: FullyShardedDataParallel with a per-layer transformer auto-wrap
          policy, use_orig_params=True, param_init_fn making each module
          with to_empty
  amp: fp32 weights, bf16 autocast
  mp:  FSDP's own mixed precision, param_dtype bf16, reduce_dtype fp32
       (MixedPrecisionPolicy / MixedPrecision), no autocast
  offload: mp with CPU offload (CPUOffloadPolicy, made with
       to_empty(device="cpu") as FSDP2 asks / CPUOffload(offload_params=True))

usage (under torchrun):
  fsdp_llama_plain.py 1|2 LLAMA_DIR LAYERS HIDDEN HEADS INTER VOCAB BATCH SEQ [amp|mp|offload]"""
import functools
import sys

version = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from llama import Layer, LlamaForCausalLM  # noqa: E402

layers, d, h, inter, vocab, batch, seq = (int(a) for a in sys.argv[3:10])
mode = sys.argv[10] if len(sys.argv) > 10 else "amp"
dist.init_process_group("nccl")
torch.cuda.set_device(0)
with torch.device("meta"):
    model = LlamaForCausalLM(layers, d, h, inter, vocab)
if version == "2":
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    kw = {}
    if mode in ("mp", "offload"):
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    if mode == "offload":
        from torch.distributed.fsdp import CPUOffloadPolicy

        kw["offload_policy"] = CPUOffloadPolicy()
    for layer in model.layers:
        fully_shard(layer, **kw)
    fully_shard(model, **kw)
    model.to_empty(device="cpu" if mode == "offload" else "cuda")
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            m.reset_parameters()
else:
    from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel, MixedPrecision
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    kw = {}
    if mode == "offload":
        kw["cpu_offload"] = CPUOffload(offload_params=True)
    if mode in ("mp", "offload"):
        kw["mixed_precision"] = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32,
                                               buffer_dtype=torch.bfloat16)
    model = FullyShardedDataParallel(
        model, auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Layer}),
        device_id=torch.cuda.current_device(), use_orig_params=True,
        param_init_fn=lambda m: m.to_empty(device=torch.cuda.current_device(), recurse=False), **kw)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(3):
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode == "amp"):
        loss = model(ids, ids)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
dist.destroy_process_group()

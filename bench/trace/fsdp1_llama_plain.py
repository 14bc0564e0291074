"""Plain-torch Llama under FSDP1: FullyShardedDataParallel with a
transformer auto-wrap policy per layer, built on meta, param_init_fn
to_empty, AdamW, bf16 autocast (amp) or MixedPrecision(param_dtype=bf16,
reduce_dtype=float32) (mp).
usage (torchrun): fsdp1_plain.py LLAMA_DIR LAYERS HIDDEN HEADS INTER VOCAB BATCH SEQ [amp|mp]"""
import functools
import sys
sys.path.insert(0, sys.argv[1])
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from llama import LlamaForCausalLM, Layer

layers, d, h, inter, vocab, batch, seq = (int(a) for a in sys.argv[2:9])
mode = sys.argv[9] if len(sys.argv) > 9 else "amp"
dist.init_process_group("nccl")
torch.cuda.set_device(0)
with torch.device("meta"):
    model = LlamaForCausalLM(layers, d, h, inter, vocab)
kw = {}
if mode == "mp":
    kw["mixed_precision"] = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
model = FSDP(model, auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Layer}),
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

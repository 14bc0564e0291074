"""Plain-torch Llama (testdata/llama.py) under FSDP2: fully_shard per layer
and the root, deferred init, AdamW, autocast bf16 or MixedPrecisionPolicy.
usage (torchrun): fsdp2_plain.py LLAMA_DIR LAYERS HIDDEN HEADS INTER VOCAB BATCH SEQ [amp|mp]"""
import sys
sys.path.insert(0, sys.argv[1])
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from llama import LlamaForCausalLM

layers, d, h, inter, vocab, batch, seq = (int(a) for a in sys.argv[2:9])
mode = sys.argv[9] if len(sys.argv) > 9 else "amp"
dist.init_process_group("nccl")
torch.cuda.set_device(0)
with torch.device("meta"):
    model = LlamaForCausalLM(layers, d, h, inter, vocab)
kw = {}
if mode == "mp":
    kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
for layer in model.layers:
    fully_shard(layer, **kw)
fully_shard(model, **kw)
model.to_empty(device="cuda")
for m in model.modules():
    if isinstance(m, (nn.Linear, nn.Embedding)):
        m.reset_parameters()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(3):
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode == "amp"):
        loss = model(ids, ids)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
dist.destroy_process_group()

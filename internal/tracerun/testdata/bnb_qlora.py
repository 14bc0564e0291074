"""bitsandbytes under the trace: two nf4 Linear4bit layers quantized by
.cuda(), a trainable adapter of 1,048,576 elements (1e5 or more: its
paged optimizer's states go to CUDA managed memory), two steps.
usage: bnb_qlora.py paged|plain|int8 (PagedAdamW8bit, or AdamW8bit; int8:
an LLM.int8 layer with outlier threshold 6.0 for the second, its weight
loaded as transformers 5 loads it, AdamW8bit)."""
import sys

import bitsandbytes as bnb
import torch

paged = sys.argv[1] == "paged"
model = torch.nn.Sequential(
    bnb.nn.Linear4bit(1024, 4096, bias=False, compute_dtype=torch.bfloat16, quant_type="nf4"),
    bnb.nn.Linear4bit(4096, 1024, bias=False, compute_dtype=torch.bfloat16, quant_type="nf4"))
model.cuda()
if sys.argv[1] == "int8":
    lt = bnb.nn.Linear8bitLt(4096, 1024, bias=False, has_fp16_weights=False, threshold=6.0)
    w = torch.empty(1024, 4096, dtype=torch.bfloat16, device="cuda")
    lt.weight = bnb.nn.Int8Params(w.to("cpu"), requires_grad=False, has_fp16_weights=False).to(w.device)
    del w
    model[1] = lt.cuda()
adapter = torch.nn.Linear(1024, 1024, bias=False).cuda()
opt = (bnb.optim.PagedAdamW8bit if paged else bnb.optim.AdamW8bit)(adapter.parameters(), lr=1e-4)
for _ in range(2):
    x = torch.randn(8, 1024, device="cuda", requires_grad=True)
    loss = (model(x) + adapter(x)).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()

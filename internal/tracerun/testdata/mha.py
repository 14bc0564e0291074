# nn.TransformerEncoder (nn.MultiheadAttention inside) trained two steps,
# optionally under CUDA autocast: F.multi_head_attention_forward is a
# Python-level torch function whose projections and attention the tracer
# must see. Args: batch seq d_model heads [amp-bf16]
import sys

import torch

b, s, d, h = (int(x) for x in sys.argv[1:5])
amp = len(sys.argv) > 5 and sys.argv[5] == "amp-bf16"
layer = torch.nn.TransformerEncoderLayer(d, h, 4 * d, dropout=0.1, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 2).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    x = torch.randn(b, s, d, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)

# Patterns of Hugging Face transformers' model code that a meta trace must
# run as on a GPU (each found tracing transformers' GPT-2, Llama and BERT):
# - "pad_token_id in input_ids[:, [-1, 0]]" (warn_if_padding_and_no_attention_mask):
#   Tensor.__contains__ reads a value with .item() inside torch's own
#   function handling;
# - torch.autocast(device_type=x.device.type, enabled=False) (Llama's
#   rotary embedding): x.device.type is "meta" on meta, "cuda" on a GPU;
# - model.gradient_checkpointing_enable(): each block's forward runs again
#   inside loss.backward(), its dropout included (reentrant and not), and
#   under autocast in the autocast state of the forward (bf16 GEMMs);
# - a tensor times a Python number inside non-reentrant checkpointing (timm's
#   attention `q * self.scale`): autograd saves the number as a wrapped-number
#   tensor, which torch 1.13's Python dispatch hands to a mode as a float
#   when checkpoint's pack hook detaches it.
# argv[1]: reentrant (default) or nonreentrant checkpointing; argv[2]: amp
# for the forward under torch.autocast("cuda", torch.bfloat16).
import sys

import torch
from torch.utils.checkpoint import checkpoint

reentrant = len(sys.argv) < 2 or sys.argv[1] != "nonreentrant"
amp = len(sys.argv) > 2 and sys.argv[2] == "amp"


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 64)
        self.drop = torch.nn.Dropout(0.1)
        self.down = torch.nn.Linear(64, 16)

    def forward(self, x):
        with torch.autocast(device_type=x.device.type, enabled=False):
            x = x.float()
        return x + self.down(self.drop(torch.relu(self.up(x)))) * 0.5


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 16)
        self.blocks = torch.nn.ModuleList([Block(), Block()])

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=reentrant)
        return x


model = Model().cuda()
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    ids = torch.randint(0, 100, (4, 8)).cuda()
    if 0 in ids[:, [-1, 0]]:
        print("padding?")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        loss = model(ids).float().logsumexp(-1).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()

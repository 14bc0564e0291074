# Llama in plain torch, module for module as Hugging Face's
# modeling_llama.py builds it: RMSNorm computed in fp32 and cast back,
# rotary embeddings from an inv_freq buffer (cos/sin in the hidden
# states' dtype), q/k/v/o without bias, eager attention with a
# (b, 1, s, s) causal mask, softmax in fp32, SwiGLU MLP, untied lm_head,
# ForCausalLMLoss (logits.float(), labels shifted, cross_entropy).
# transformers is not needed. The model is built on the host in fp32, cast
# to DTYPE there and moved with .cuda(): under --trace no weight is ever
# allocated for real.
#
# usage: llama.py LAYERS HIDDEN HEADS INTER VOCAB BATCH SEQ [fp32|bf16|amp-bf16] [CHECKPOINT]
# amp-bf16: fp32 weights, the forward and loss under torch.autocast("cuda", bfloat16).
# With CHECKPOINT, its state_dict is loaded (torch.load + load_state_dict)
# before the move. Importing the file defines the model and runs nothing.
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        dt = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dt)


class Rotary(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv, persistent=False)

    @torch.no_grad()
    def forward(self, x, pos):
        inv = self.inv_freq[None, :, None].float().expand(pos.shape[0], -1, 1)
        freqs = (inv @ pos[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.hd = h, d // h
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, D = x.shape
        shape = (B, T, self.h, self.hd)
        q = self.q_proj(x).view(shape).transpose(1, 2)
        k = self.k_proj(x).view(shape).transpose(1, 2)
        v = self.v_proj(x).view(shape).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        w = torch.matmul(q, k.transpose(2, 3)) * self.hd ** -0.5
        w = w + mask[:, :, :, : k.shape[-2]]
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        w = F.dropout(w, p=0.0, training=self.training)
        out = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(B, T, D)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, d, inter):
        super().__init__()
        self.gate_proj = nn.Linear(d, inter, bias=False)
        self.up_proj = nn.Linear(d, inter, bias=False)
        self.down_proj = nn.Linear(inter, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, d, h, inter):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = Attention(d, h)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = MLP(d, inter)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaForCausalLM(nn.Module):
    def __init__(self, layers, d, h, inter, vocab):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([Layer(d, h, inter) for _ in range(layers)])
        self.norm = RMSNorm(d)
        self.rotary_emb = Rotary(d // h)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids, labels):
        B, T = ids.shape
        x = self.embed_tokens(ids)
        pos = torch.arange(T, device=ids.device).unsqueeze(0)
        mask = torch.full((T, T), torch.finfo(x.dtype).min, dtype=x.dtype, device=ids.device).triu(1)
        mask = mask[None, None].expand(B, 1, T, T).contiguous()
        cos, sin = self.rotary_emb(x, pos)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        logits = self.lm_head(self.norm(x))
        labels = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous()
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)


if __name__ == "__main__":
    layers, d, h, inter, vocab, batch, seq = (int(a) for a in sys.argv[1:8])
    precision = sys.argv[8] if len(sys.argv) > 8 else "fp32"
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "amp-bf16": torch.float32}[precision]
    torch.manual_seed(0)
    model = LlamaForCausalLM(layers, d, h, inter, vocab)
    if len(sys.argv) > 9:
        model.load_state_dict(torch.load(sys.argv[9], map_location="cpu"))
    model = model.to(dtype).cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)  # the CUDA default since torch 2.0
    for step in range(3):
        ids = torch.randint(0, vocab, (batch, seq)).cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "amp-bf16"):
            loss = model(ids, ids)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

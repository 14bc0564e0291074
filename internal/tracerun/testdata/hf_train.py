"""A plain Hugging Face training loop, as a user writes it, for torchmem
estimate --trace. Usage:
  hf_train.py MODEL BATCH SEQ PRECISION CKPT ATTN [CONFIG_OUT]
MODEL: gpt2-small gpt2-124m llama-small tinyllama bert-small bert-base
PRECISION: fp32 | amp-bf16; CKPT: 0|1; ATTN: eager|sdpa|default.
HF_TRAIN_KEEP_OUTPUT=1: keep the model's whole output through the next step;
HF_TRAIN_USE_CACHE=0: config.use_cache = False.
CONFIG_OUT: where to write the model's config.json (for the built-in estimator)."""
import os
import sys

import torch
import transformers
from transformers import (BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel,
                          LlamaConfig, LlamaForCausalLM)

name, batch, seq, precision, ckpt, attn = sys.argv[1:7]
batch, seq, ckpt = int(batch), int(seq), ckpt == "1"
config_out = sys.argv[7] if len(sys.argv) > 7 else None
keep_output = os.environ.get("HF_TRAIN_KEEP_OUTPUT") == "1"

if name == "gpt2-small":
    cfg, cls = GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=128), GPT2LMHeadModel
elif name == "gpt2-124m":
    cfg, cls = GPT2Config(), GPT2LMHeadModel  # the gpt2 checkpoint's config
elif name == "llama-small":
    cfg, cls = LlamaConfig(hidden_size=128, intermediate_size=344, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, vocab_size=1000, max_position_embeddings=256), LlamaForCausalLM
elif name == "tinyllama":  # TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T config.json
    cfg, cls = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
                           num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048,
                           rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False), LlamaForCausalLM
elif name == "bert-small":
    cfg, cls = BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512,
                          vocab_size=1000, max_position_embeddings=256), BertForMaskedLM
elif name == "bert-base":
    cfg, cls = BertConfig(), BertForMaskedLM  # bert-base-uncased's config
else:
    raise SystemExit("unknown model " + name)
cfg.architectures = [cls.__name__]
if os.environ.get("HF_TRAIN_USE_CACHE") == "0":
    cfg.use_cache = False  # else transformers >= 4.5x's GPT-2 fills a DynamicCache (copies of K, V) in training too
if config_out:
    cfg.to_json_file(config_out)

kw = {} if attn == "default" else {"attn_implementation": attn}
model = cls._from_config(cfg, **kw) if kw else cls(cfg)
if ckpt:
    model.gradient_checkpointing_enable()
model.to("cuda")
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

g = torch.Generator().manual_seed(0)
for step in range(10):
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), generator=g).to("cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "amp-bf16"):
        out = model(input_ids=ids, labels=ids)
    loss = out.loss
    if not keep_output:
        del out  # else the loop variable holds last step's logits (and KV) through the next forward
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    print("step", step, "transformers", transformers.__version__, "torch", torch.__version__, flush=True)

#!/usr/bin/env python3
"""A fine-tuning script on transformers' Trainer, as users write one, for
`torchmem estimate --trace` (bench/trace/hf_trainer.sh compares it with the
built-in estimate). Random token ids, labels = input_ids (the model's own
loss), an all-ones attention mask, TrainingArguments(bf16=True,
optim="adamw_torch"), five steps; HF_TRAINER_PRECISION=fp32 for bf16=False.

  python3 hf_trainer.py SOURCE BATCH SEQ CKPT [bf16|-] [DS_CONFIG]

SOURCE is a model directory for from_pretrained (its weights are read on a
GPU host, never under the tracer) or cfg:DIR for from_config of DIR's
config.json; CKPT 1 turns on gradient checkpointing; bf16 loads the
weights as bfloat16 (dtype=torch.bfloat16). DS_CONFIG: a DeepSpeed
config file (TrainingArguments(deepspeed=...)), run under torchrun or the
deepspeed launcher.
"""
import os
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM, Trainer, TrainingArguments

src, batch, seq, ckpt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
half = len(sys.argv) > 5 and sys.argv[5] == "bf16"
ds = sys.argv[6] if len(sys.argv) > 6 else None


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, vocab):
        self.vocab = vocab

    def __len__(self):
        return 1000

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (seq,))
        return {"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones(seq, dtype=torch.long)}


kw = {"dtype": torch.bfloat16} if half else {}
if src.startswith("cfg:"):
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(src[4:]), **kw)
else:
    model = AutoModelForCausalLM.from_pretrained(src, **kw)
model.config.use_cache = False
# HF_TRAINER_PRECISION=fp32: bf16=False, the Trainer's float32 training
mixed = os.environ.get("HF_TRAINER_PRECISION", "bf16") == "bf16"
args = TrainingArguments(output_dir="hf_trainer_out", per_device_train_batch_size=batch, bf16=mixed,
                         gradient_checkpointing=ckpt, optim="adamw_torch", max_steps=5, logging_steps=1,
                         save_strategy="no", report_to=[], dataloader_num_workers=0, deepspeed=ds)
Trainer(model=model, args=args, train_dataset=RandomTokens(model.config.vocab_size)).train()

# fms-acceleration's QLoRA benchmark scenarios (scripts/benchmarks/scenarios.yaml, defaults.yaml) as a
# transformers 5 Trainer script, for the trace: Mistral-7B in nf4 (double quantization, bf16 compute),
# LoRA r 16, alpha 16, dropout 0.1 on q,k,v,o_proj, packed 4,096-token samples, gradient checkpointing
# with use_reentrant=True (transformers 4.48's default), bf16, AdamW.
#   qlora_fms.py MODEL_DIR BATCH baseline|accelerated
# baseline-peft-bnb: peft's prepare_model_for_kbit_training, then the bf16 cast of the embeddings and
# lm_head that TRL's SFTTrainer makes with bf16=True; accelerated-peft-bnb: no fp32 upcast, only
# enable_input_require_grads.
import sys

import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments

src, B, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
S = 4096


class Packed(torch.utils.data.Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, i):
        ids = torch.randint(0, 32000, (S,))
        return {"input_ids": ids, "labels": ids.clone()}


quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                           bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained(src, quantization_config=quant, dtype=torch.bfloat16,
                                             device_map={"": 0}, attn_implementation="sdpa")
model.config.use_cache = False
reentrant = {"use_reentrant": True}
if mode == "baseline":
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True,
                                            gradient_checkpointing_kwargs=reentrant)
else:
    model.enable_input_require_grads()
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=16, lora_dropout=0.1,
                                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                                         task_type="CAUSAL_LM"))
if mode == "baseline":
    for name, module in model.named_modules():
        if name.endswith("embed_tokens") or name.endswith("lm_head"):
            module.to(torch.bfloat16)
args = TrainingArguments(output_dir="fms-out", per_device_train_batch_size=B, bf16=True,
                         gradient_checkpointing=True, gradient_checkpointing_kwargs=reentrant,
                         optim="adamw_torch", max_steps=5, logging_steps=1, save_strategy="no", report_to=[],
                         dataloader_num_workers=0)
Trainer(model=model, args=args, train_dataset=Packed()).train()

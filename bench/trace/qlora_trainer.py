# A QLoRA fine-tuning script as users write one (transformers 5.x Trainer,
# PEFT, bitsandbytes), on random token ids:
#   qlora_trainer.py MODEL_DIR BATCH SEQ CKPT(0|1) OPTIM [R] [int8]
# OPTIM is the Trainer's optim= (adamw_torch, paged_adamw_8bit, ...); R the
# LoRA rank (16), on all linear layers, alpha 2R, dropout 0.05. The base is
# nf4 with double quantization and bf16 compute, or LLM.int8 with "int8".
import sys

import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer, TrainingArguments

src, B, S, ckpt, optim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
r = int(sys.argv[6]) if len(sys.argv) > 6 else 16
int8 = len(sys.argv) > 7 and sys.argv[7] == "int8"


class Tokens(torch.utils.data.Dataset):
    def __init__(self, vocab):
        self.vocab = vocab

    def __len__(self):
        return 1000

    def __getitem__(self, i):
        ids = torch.randint(0, self.vocab, (S,))
        return {"input_ids": ids, "labels": ids.clone(), "attention_mask": torch.ones(S, dtype=torch.long)}


if int8:
    quant = BitsAndBytesConfig(load_in_8bit=True)
else:
    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
                               bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained(src, quantization_config=quant, dtype=torch.bfloat16,
                                             device_map={"": 0})
model.config.use_cache = False
model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=ckpt)
model = get_peft_model(model, LoraConfig(r=r, lora_alpha=2 * r, lora_dropout=0.05, target_modules="all-linear",
                                         task_type="CAUSAL_LM"))
model.print_trainable_parameters()
args = TrainingArguments(output_dir="qlora-out", per_device_train_batch_size=B, bf16=True,
                         gradient_checkpointing=ckpt, optim=optim, max_steps=5, logging_steps=1,
                         save_strategy="no", report_to=[], dataloader_num_workers=0)
Trainer(model=model, args=args, train_dataset=Tokens(model.config.vocab_size)).train()

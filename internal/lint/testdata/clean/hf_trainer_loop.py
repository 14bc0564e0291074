# A Hugging Face-style training loop: gradient accumulation, AMP with
# torch.amp, a scheduler, gradient clipping, evaluation under inference_mode.
import math

import numpy as np
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup


class Trainer:
    def __init__(self, model, args, train_dataset, eval_dataset, data_collator):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.data_collator = data_collator
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)

    def get_train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size,
                          shuffle=True, collate_fn=self.data_collator,
                          num_workers=self.args.dataloader_num_workers, pin_memory=True)

    def get_eval_dataloader(self):
        return DataLoader(self.eval_dataset, batch_size=self.args.per_device_eval_batch_size,
                          collate_fn=self.data_collator, num_workers=self.args.dataloader_num_workers)

    def training_step(self, batch):
        self.model.train()
        batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.args.fp16):
            outputs = self.model(**batch)
            loss = outputs.loss
        loss = loss / self.args.gradient_accumulation_steps
        self.scaler.scale(loss).backward()
        return loss.detach()

    def train(self):
        train_dataloader = self.get_train_dataloader()
        num_update_steps_per_epoch = math.ceil(len(train_dataloader) / self.args.gradient_accumulation_steps)
        max_steps = self.args.num_train_epochs * num_update_steps_per_epoch
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.args.learning_rate,
                                      weight_decay=self.args.weight_decay)
        lr_scheduler = get_linear_schedule_with_warmup(optimizer, self.args.warmup_steps, max_steps)
        self.model.to(self.device)
        tr_loss = torch.tensor(0.0, device=self.device)
        global_step = 0
        optimizer.zero_grad(set_to_none=True)
        for epoch in range(self.args.num_train_epochs):
            for step, batch in enumerate(train_dataloader):
                tr_loss_step = self.training_step(batch)
                tr_loss += tr_loss_step
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    self.scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                    self.scaler.step(optimizer)
                    self.scaler.update()
                    lr_scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    global_step += 1
                    if global_step % self.args.logging_steps == 0:
                        print({"loss": tr_loss.item() / self.args.logging_steps, "step": global_step})
                        tr_loss -= tr_loss
            metrics = self.evaluate()
            print(epoch, metrics)

    def evaluate(self):
        eval_dataloader = self.get_eval_dataloader()
        self.model.eval()
        all_preds, all_labels = [], []
        eval_loss = 0.0
        with torch.inference_mode():
            for batch in eval_dataloader:
                batch = {k: v.to(self.device) for k, v in batch.items()}
                outputs = self.model(**batch)
                eval_loss += outputs.loss.item()
                all_preds.append(outputs.logits.argmax(dim=-1).cpu().numpy())
                all_labels.append(batch["labels"].cpu().numpy())
        preds = np.concatenate(all_preds)
        labels = np.concatenate(all_labels)
        return {"eval_loss": eval_loss / len(eval_dataloader), "accuracy": float((preds == labels).mean())}


def main(args, train_dataset, eval_dataset, collator):
    tokenizer = AutoTokenizer.from_pretrained(args.model_name)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name, num_labels=2)
    trainer = Trainer(model, args, train_dataset, eval_dataset, collator)
    trainer.train()
    model.save_pretrained(args.output_dir)
    tokenizer.save_pretrained(args.output_dir)

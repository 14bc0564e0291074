#!/usr/bin/env python3
"""A LightningModule as users write one (a small transformer LM on
nn.TransformerEncoder, random tokens), trained by L.Trainer with the
precision given, 32-true or bf16-mixed: Lightning's automatic optimization
runs training_step inside the closure optimizer.step calls, and its
bf16-mixed plugin puts it under torch.autocast. For bench/trace/
lever_retrace.sh (the amp lever against Lightning's own mixed precision).

  python3 lightning_amp.py 32-true|bf16-mixed
"""
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
import lightning as L

precision = sys.argv[1]
V, D, LAYERS, B, S = 32000, 768, 6, 8, 512


class LM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        layer = nn.TransformerEncoderLayer(D, 12, 4 * D, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS)
        self.head = nn.Linear(D, V)

    def training_step(self, batch, i):
        x, y = batch
        h = self.blocks(self.emb(x), is_causal=True, mask=nn.Transformer.generate_square_subsequent_mask(S, device=x.device))
        return F.cross_entropy(self.head(h).view(-1, V), y.view(-1))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        t = torch.randint(0, V, (S + 1,))
        return t[:-1], t[1:]


trainer = L.Trainer(accelerator="gpu", devices=1, precision=precision, max_steps=4, logger=False,
                    enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
trainer.fit(LM(), torch.utils.data.DataLoader(Tokens(), batch_size=B, num_workers=0))

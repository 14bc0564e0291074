"""A language-model loop that updates its weights by hand, with no
torch.optim optimizer (as pytorch/examples word_language_model does;
written for torchmem's tests, no code copied): gradients clipped, then
p.data.add_(p.grad, alpha=-lr), for many batches. The tracer must still
end after the steps asked for.

usage: manualsgd.py [BATCH]
"""

import sys

import torch
import torch.nn as nn

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 8
device = torch.device("cuda")
vocab, hidden, seq = 500, 64, 12


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x, h):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h


model = LM().to(device)
h = torch.zeros(1, batch, hidden, device=device)
lr = 0.5
for step in range(1000):
    x = torch.randint(0, vocab, (seq, batch)).to(device)
    y = torch.randint(0, vocab, (seq, batch)).to(device)
    h = h.detach()
    model.zero_grad()
    logits, h = model(x, h)
    loss = nn.functional.cross_entropy(logits.view(-1, vocab), y.view(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)

# Hidden states handled correctly.
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, self.nhid), torch.zeros(1, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


# pytorch/examples word_language_model: repackaged before each batch.
def train(model, train_data, criterion, optimizer, bptt, get_batch):
    hidden = model.init_hidden(20)
    for i in range(0, train_data.size(0) - 1, bptt):
        data, targets = get_batch(train_data, i)
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, 10), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# Detached in place (as the RPC tutorial's trainer does).
def train_inplace(model, batches, criterion, optimizer):
    hidden = model.init_hidden(5)
    for data, target in batches:
        hidden[0].detach_()
        hidden[1].detach_()
        output, hidden = model(data, hidden)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# A fresh state per batch.
def train_fresh(model, loader, criterion, optimizer):
    for x, y in loader:
        hidden = model.init_hidden(x.size(1))
        output, hidden = model(x, hidden)
        criterion(output, y).backward()
        optimizer.step()
        optimizer.zero_grad()


# BPTT over one sequence: the state is carried across time steps, and
# backward runs once after the inner loop.
def train_sequence(cell, loader, optimizer):
    for seq, y in loader:
        h = torch.zeros(seq.size(1), 32)
        c = torch.zeros(seq.size(1), 32)
        for t in range(seq.size(0)):
            h, c = cell(seq[t], (h, c))
        loss = ((h - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# Generation: no backward at all.
@torch.no_grad()
def generate(model, start, steps):
    hidden = model.init_hidden(1)
    x = start
    for _ in range(steps):
        out, hidden = model(x, hidden)
        x = out.argmax(-1)
    return x

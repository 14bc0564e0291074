import torch
import torch.nn.functional as F


def train(model, loader, optimizer, accumulation_steps=4):
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        loss.backward()  # want: TM003
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_step_outside(model, loader, optimizer, args):
    for step, batch in enumerate(loader):
        loss = model(**batch).loss / args.gradient_accumulation_steps
        loss.backward()
        optimizer.step()  # want: TM003
        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.zero_grad()


def train_const(model, loader, opt):
    for i, (x, y) in enumerate(loader):
        F.mse_loss(model(x), y).backward()  # want: TM003
        if i % 8 == 0:
            opt.step()
            opt.zero_grad()

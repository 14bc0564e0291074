# Accumulation with a hand-kept counter, or a modulus TM003 does not read:
# the loss is summed over the micro-batches, never divided.
import torch


def train(model, loader, optimizer, criterion, n):
    step = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()  # want: TM020
        step += 1
        if step == n:
            optimizer.step()
            optimizer.zero_grad()
            step = 0


def train_every(model, loader, optimizer, criterion, args):
    for i, (x, y) in enumerate(loader):
        out = model(x)
        criterion(out, y).backward()  # want: TM020
        if (i + 1) % args.update_every == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_micro_steps(model, get_batch, optimizer, gradient_accumulation_steps, max_iters):
    for iter_num in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            X, Y = get_batch("train")
            logits, loss = model(X, Y)
            loss.backward()  # want: TM020
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

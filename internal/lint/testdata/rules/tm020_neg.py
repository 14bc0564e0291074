# Accumulation done right, or not accumulation at all (kobongsoo/GPUTech
# reference/gradient_accum_training_loop.py normalises with
# `loss = loss / accumulation_steps`).
import torch


def train(model, loader, optimizer, criterion, n):
    step = 0
    for x, y in loader:
        loss = criterion(model(x), y) / n
        loss.backward()
        step += 1
        if step == n:
            optimizer.step()
            optimizer.zero_grad()
            step = 0


def train_inplace(model, loader, optimizer, criterion, k):
    count = 0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss /= k
        loss.backward()
        count += 1
        if count >= k:
            optimizer.step()
            optimizer.zero_grad()
            count = 0


def train_plain(model, loader, optimizer, criterion, log_every):
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
        if i % log_every == 0:
            print(i)


def gan(netD, netG, loader, optD, optG, n_critic):
    for i, x in enumerate(loader):
        optD.zero_grad()
        netD(x).mean().backward()
        optD.step()
        if i % n_critic == 0:
            optG.zero_grad()
            netD(netG(x)).mean().backward()
            optG.step()


def train_micro_steps_scaled(model, get_batch, optimizer, gradient_accumulation_steps, max_iters):
    for iter_num in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            X, Y = get_batch("train")
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def train_micro_steps_stepping_inside(model, get_batch, optimizer, accum_steps):
    for micro_step in range(accum_steps):
        logits, loss = model(*get_batch())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

import torch
import torch.nn.functional as F


def train(model, loader, optimizer, scaler, accum_steps):
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda"):
            loss = F.cross_entropy(model(x), y) / accum_steps
        scaler.scale(loss).backward()
        if (i + 1) % accum_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)


def train_aug(model, loader, optimizer, grad_accum):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        loss /= grad_accum
        loss.backward()
        if (i + 1) % grad_accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_accelerate(model, loader, optimizer, accelerator, gradient_accumulation_steps):
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if step % gradient_accumulation_steps == 0:
            print("synced")


def logging_only(model, loader, optimizer):
    for i, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 100 == 0:
            print(i, loss.item())


def wgan(netD, netG, loader, optimizerD, optimizerG, n_critic_const_loop):
    for i, (real, z) in enumerate(loader):
        optimizerD.zero_grad()
        lossD = -netD(real).mean() + netD(netG(z).detach()).mean()
        lossD.backward()
        optimizerD.step()
        if i % 5 == 0:
            optimizerG.zero_grad()
            lossG = -netD(netG(z)).mean()
            lossG.backward()
            optimizerG.step()


def per_token(model, loader, optimizer, grad_accum_steps):
    for i, batch in enumerate(loader):
        loss = model(**batch).loss
        loss = loss / batch["num_tokens"]
        loss.backward()
        if (i + 1) % grad_accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()

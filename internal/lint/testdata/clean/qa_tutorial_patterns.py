import copy
import time

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import Dataset, DataLoader
import numpy as np


def train_model(model, dataloaders, dataset_sizes, criterion, optimizer, scheduler, device, num_epochs=25):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                inputs = inputs.to(device)
                labels = labels.to(device)
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    return model


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def train_lm(model, train_data, criterion, lr, bptt, ntokens, clip, get_batch):
    model.train()
    total_loss = 0.
    hidden = model.init_hidden(20)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()


@torch.no_grad()
def evaluate_lm(model, data_source, criterion, get_batch, bptt):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(10)
    for i in range(0, data_source.size(0) - 1, bptt):
        data, targets = get_batch(data_source, i)
        output, hidden = model(data, hidden)
        hidden = repackage_hidden(hidden)
        total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


@torch.inference_mode()
def predict(model, loader, device):
    model.eval()
    preds = []
    for x, _ in loader:
        out = model(x.to(device))
        preds.append(out.argmax(dim=1))
    return torch.cat(preds)


def train_accum(model, loader, optimizer, accum_steps, scaler):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    for i, (x, y) in enumerate(loader):
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
            loss = loss / accum_steps
        scaler.scale(loss).backward()
        if (i + 1) % accum_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    torch.cuda.empty_cache()


class MemmapDataset(Dataset):
    def __init__(self, path, n):
        self.data = np.memmap(path, dtype=np.float32, mode="r").reshape(n, -1)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        return torch.from_numpy(np.array(self.data[idx]))


def wgan_step(netD, netG, optD, real, noise, clamp):
    for p in netD.parameters():
        p.data.clamp_(-clamp, clamp)
    optD.zero_grad()
    fake = netG(noise).detach()
    errD = -(netD(real).mean() - netD(fake).mean())
    errD.backward()
    optD.step()
    return errD.item()


def ema_update(ema_model, model, decay=0.999):
    with torch.no_grad():
        for ema_p, p in zip(ema_model.parameters(), model.parameters()):
            ema_p.mul_(decay).add_(p, alpha=1 - decay)


def load(path):
    state = torch.load(path, map_location=lambda storage, loc: storage)
    return state


def main():
    loader = DataLoader(MemmapDataset("x.bin", 1000), batch_size=32, num_workers=8)
    model = nn.Linear(10, 2).cuda()
    opt = optim.SGD(model.parameters(), lr=0.1)
    history = []
    for epoch in range(10):
        epoch_loss = 0.0
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x.cuda()), y.cuda())
            loss.backward()
            opt.step()
            epoch_loss += loss.detach()
            history.append(loss.item())
        print(epoch, epoch_loss.item())

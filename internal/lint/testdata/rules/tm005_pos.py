import torch
import torch.nn.functional as F


def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        torch.cuda.empty_cache()  # want: TM005


def generate(model, prompts):
    outs = []
    with torch.no_grad():
        for p in prompts:
            outs.append(model(p).cpu())
            torch.cuda.empty_cache()  # want: TM005
    return outs


def train_guarded(model, loader, optimizer, device):
    for x, y in loader:
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()  # want: TM005

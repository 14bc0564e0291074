import torch
import torch.nn as nn
import torch.nn.functional as F


def train(model, loader, optimizer, criterion):
    total_loss = 0.0
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        losses.append(loss.detach())
        total_loss += float(loss)
    return total_loss / len(loader), losses


def multi_head(model, loader, optimizer, heads):
    for x, ys in loader:
        loss = 0
        out = model(x)
        for k in heads:
            loss += F.cross_entropy(out[k], ys[k])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def sum_losses(outputs, targets):
    loss = 0
    for o, t in zip(outputs, targets):
        loss += F.mse_loss(o, t)
    return loss


def micro_batches(model, chunks, optimizer):
    losses = []
    for x, y in chunks:
        losses.append(F.cross_entropy(model(x), y))
    total = torch.stack(losses).mean()
    total.backward()
    optimizer.step()


def correct_count(model, loader, optimizer):
    correct = 0
    for x, y in loader:
        out = model(x)
        loss = F.cross_entropy(out, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pred = out.argmax(dim=1)
        correct += (pred == y).sum()
        correct += pred.eq(y).sum()


def eval_sum(model, loader):
    total = 0
    with torch.no_grad():
        for x, y in loader:
            total += F.cross_entropy(model(x), y)
    return total


def per_iteration_reset(model, loader, optimizer):
    for x, y in loader:
        logs = []
        loss = F.cross_entropy(model(x), y)
        logs.append(loss)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(logs)


def transfer_learning_tutorial(model, dataloaders, criterion, optimizer, device):
    for phase in ["train", "val"]:
        running_loss = 0.0
        running_corrects = 0
        all_preds = []
        for inputs, labels in dataloaders[phase]:
            inputs, labels = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                outputs = model(inputs)
                _, preds = torch.max(outputs, 1)
                loss = criterion(outputs, labels)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
            running_loss += loss.item() * inputs.size(0)
            running_corrects += torch.sum(preds == labels.data)
            all_preds.append(preds)


def per_iteration_stats(model, loader, optimizer):
    stats = {}
    for x, y in loader:
        stats["loss"] = 0
        loss = F.cross_entropy(model(x), y)
        stats["loss"] += loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(stats)


def yolo_style(model, loader, optimizer, compute_loss):
    mloss = torch.zeros(3)
    for i, (imgs, targets) in enumerate(loader):
        pred = model(imgs)
        loss, loss_items = compute_loss(pred, targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        mloss += loss_items

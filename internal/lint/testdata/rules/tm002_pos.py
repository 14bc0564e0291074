import torch
import torch.nn as nn


def train(model, loader, optimizer, criterion):
    total_loss = 0
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        output = model(x)
        loss = criterion(output, y)
        loss.backward()
        optimizer.step()
        total_loss += loss  # want: TM002
        losses.append(loss)  # want: TM002
    return total_loss / len(loader), losses


def train_epochs(model, loader, optimizer, epochs):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        running = 0.0
        stats = {"loss": 0.0, "norm": 0.0}
        for step, (x, y) in enumerate(loader):
            out = model(x)
            loss = criterion(out, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running = running + loss  # want: TM002
            stats["norm"] += out.sum()  # want: TM002
        print(epoch, running, stats)


def train_hf(model, train_dataloader, optimizer):
    history = []
    for batch in train_dataloader:
        outputs = model(**batch)
        loss = compute_loss(outputs, batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        history.append(loss.cpu())  # want: TM002


def compute_loss(outputs, batch):
    return outputs.loss

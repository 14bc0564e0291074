# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11
# pattern: training loop sums the loss tensor across iterations; fixed with loss.detach().cpu()
# expect: TM002
import torch

def train(model, train_loader, criterion, optimizer, device):
    running_loss = 0.0
    for imgs, labels in train_loader:
        imgs, labels = imgs.to(device), labels.to(device)
        output = model(imgs)
        loss = criterion(output, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running_loss += loss
    return running_loss

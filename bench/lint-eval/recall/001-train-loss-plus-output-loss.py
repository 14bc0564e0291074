# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pai4451/ML2021/issues/2
# pattern: HW7 example: `train_loss += output.loss` keeps every step's graph; CPU RAM grows to 64 GB
# expect: TM002
import torch

def train(model, loader, optimizer):
    train_loss = 0
    for batch in loader:
        output = model(**batch)
        output.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        train_loss += output.loss
    return train_loss / len(loader)

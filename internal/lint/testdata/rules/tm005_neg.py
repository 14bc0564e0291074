import torch
import torch.nn.functional as F


def train(model, loader, optimizer, epochs):
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            try:
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
            if step % 1000 == 0:
                torch.cuda.empty_cache()
        torch.cuda.empty_cache()


def between_trials(configs, run_trial):
    for cfg in configs:
        run_trial(cfg)
        torch.cuda.empty_cache()

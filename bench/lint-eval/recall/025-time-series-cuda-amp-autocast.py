# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/thuml/Time-Series-Library/issues/740
# pattern: torch.cuda.amp.autocast / GradScaler are deprecated; use torch.amp.*('cuda')
# expect: TM009
import torch

def train(model, train_loader, criterion, model_optim, use_amp):
    scaler = torch.cuda.amp.GradScaler()
    for batch_x, batch_y in train_loader:
        model_optim.zero_grad()
        with torch.cuda.amp.autocast():
            outputs = model(batch_x)
            loss = criterion(outputs, batch_y)
        scaler.scale(loss).backward()
        scaler.step(model_optim)
        scaler.update()

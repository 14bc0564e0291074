# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/yastrebksv/TennisCourtDetector/issues/7
# pattern: base_trainer.py: no optimizer.zero_grad() anywhere in the training loop
# expect: TM004
import torch

def train(model, train_loader, optimizer, criterion, device):
    model.train()
    for iter_id, batch in enumerate(train_loader):
        out = model(batch[0].float().to(device))
        gt_hm = batch[1].float().to(device)
        loss = criterion(torch.sigmoid(out), gt_hm)
        loss.backward()
        optimizer.step()

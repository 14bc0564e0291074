# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/wz0919/waypoint-predictor/issues/4
# pattern: training loop never calls optimizer.zero_grad()
# expect: TM004
import torch

def train(predictor, train_loader, optimizer, criterion):
    predictor.train()
    for it, batch in enumerate(train_loader):
        rgb, depth, target = batch
        vis_logits = predictor(rgb.cuda(), depth.cuda())
        loss = criterion(vis_logits, target.cuda())
        loss.backward()
        optimizer.step()

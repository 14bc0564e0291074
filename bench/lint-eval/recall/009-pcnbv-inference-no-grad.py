# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/zhanhz/PC-NBV_pytorch/issues/3
# pattern: inference without `with torch.no_grad()`: GPU usage increases continuously until OOM
# expect: TM001
import torch

def test(network, test_loader, device):
    network.eval()
    preds = []
    for i, data in enumerate(test_loader):
        partial, gt = data[0].to(device), data[1]
        pred = network(partial)
        preds.append(pred.cpu().numpy())
    return preds

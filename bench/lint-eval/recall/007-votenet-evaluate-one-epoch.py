# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/facebookresearch/votenet/issues/30
# pattern: evaluate_one_epoch runs net(inputs) with autograd on; no_grad saves ~2.3 GiB
# expect: TM001
import torch

def evaluate_one_epoch(net, test_dataloader, criterion, device):
    net.eval()
    stat_dict = {}
    for batch_idx, batch_data_label in enumerate(test_dataloader):
        inputs = {"point_clouds": batch_data_label["point_clouds"].to(device)}
        end_points = net(inputs)
        loss, end_points = criterion(end_points, batch_data_label)
        stat_dict["loss"] = stat_dict.get("loss", 0) + loss.item()
    return stat_dict["loss"] / (batch_idx + 1)
